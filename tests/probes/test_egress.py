"""Egress: a pass on the (fake) internet that turns into a fail with the network cut."""

from __future__ import annotations

from qa_testkit import containers, wait_for

from .conftest import EXAMPLES, write_env

FAKE = EXAMPLES / "network-fetch" / "qa-fake-internet"
HOSTS = ["releases.example.test"]


def _networks(docker_client, run_id):
    return docker_client.networks.list(filters={"label": f"envqa.run={run_id}"})


def test_pass_turns_into_fail_with_egress_blocked(probe_ctx, docker_client):
    """Must-show: the oracle fetches its answer from the fake internet; with network none it fails."""
    from envqa.probes.network.egress import egress_probe

    ctx = probe_ctx(EXAMPLES / "network-fetch", run_id="egress-test", fake_internet_dir=FAKE, fake_internet_hosts=HOSTS)
    findings = egress_probe(ctx)
    opened, cut = ctx.new_trials
    assert (opened.purpose, opened.outcome) == ("hunt-egress-open", "pass")
    assert (cut.purpose, cut.outcome) == ("hunt-egress-cut", "fail")
    [f] = findings
    assert f.rule == "network-dependent-pass" and f.severity == "error" and f.label == "shortcut"
    assert f.trial_ids == [opened.trial_id, cut.trial_id]
    # strace saw the oracle's connect() to the fake internet's port 80.
    assert any(line.startswith("strace") and "connect" in line and ":80" in line for line in f.evidence)
    # The fake internet and its internal network are gone (removal is asynchronous in the engine).
    assert _networks(docker_client, "egress-test") == []
    wait_for(
        lambda: not containers(docker_client, "envqa.run=egress-test"),
        20,
        "containers of envqa.run=egress-test to be removed",
    )


def test_declared_network_need_is_only_noted(probe_ctx, tmp_path):
    from envqa.probes.network.egress import egress_probe

    src = EXAMPLES / "network-fetch"
    env = write_env(
        tmp_path,
        {
            "task.toml": (src / "task.toml")
            .read_text()
            .replace(
                "allow_internet = true",
                'allow_internet = true\nnetwork_mode = "allowlist"\nallowed_hosts = ["releases.example.test"]',
            ),
            "instruction.md": (src / "instruction.md").read_text(),
            "solution/solve.sh": (src / "solution" / "solve.sh").read_text(),
            "tests/test.sh": (src / "tests" / "test.sh").read_text(),
        },
    )
    [f] = egress_probe(probe_ctx(env, run_id="egress-declared", fake_internet_dir=FAKE, fake_internet_hosts=HOSTS))
    assert f.severity == "info"


def test_offline_pass_needs_no_egress_rerun(probe_ctx):
    from envqa.probes.network.egress import egress_probe

    ctx = probe_ctx(
        EXAMPLES / "clean-wordfreq", run_id="egress-offline", fake_internet_dir=FAKE, fake_internet_hosts=HOSTS
    )
    assert egress_probe(ctx) == [] and ctx.new_trials == []  # allow_internet = false: nothing to compare
