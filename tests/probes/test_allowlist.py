"""Allowlist mode: the sandbox's only way out is an egress proxy that lets through the allowed hosts only."""

from __future__ import annotations

import json

from qa_testkit import containers, wait_for

from .conftest import EXAMPLES, write_env

FETCH = r"""
import json, socket, sys, urllib.request
out = {}
for host in sys.argv[1:]:
    try:
        out[host] = urllib.request.urlopen(f"http://{host}/frobnicate/LATEST", timeout=10).read().decode().strip()
    except Exception as e:
        out[host] = f"error: {getattr(e, 'code', '')} {e}"
# CONNECT (what HTTPS clients do) through the proxy, then plain HTTP inside the tunnel.
for host in sys.argv[1:]:
    s = socket.create_connection(("egress-proxy", 3128), timeout=10)
    s.sendall(f"CONNECT {host}:80 HTTP/1.1\r\nHost: {host}:80\r\n\r\n".encode())
    status = s.recv(4096).split(b"\r\n")[0].decode()
    if " 200 " in status:
        s.sendall(f"GET /frobnicate/LATEST HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
        body = b""
        while chunk := s.recv(4096):
            body += chunk
        status += " | " + body.split(b"\r\n\r\n", 1)[-1].decode().strip()
    out["connect " + host] = status
# Without the proxy there is no route at all.
try:
    urllib.request.build_opener(urllib.request.ProxyHandler({})).open(f"http://{sys.argv[1]}/", timeout=3)
    out["direct"] = "reached"
except Exception as e:
    out["direct"] = f"error: {e}"
print(json.dumps(out))
"""


def test_allowlist_proxy_lets_through_allowed_hosts_only(docker_backend, docker_client, qa_config):
    from envqa.core.sandbox import SandboxSpec
    from envqa.sandbox.network import AllowlistBackend, FakeInternet

    image = qa_config.sandbox.base_image
    labels = {"envqa.run": "allowlist-test"}
    with FakeInternet(
        docker_client,
        image,
        EXAMPLES / "network-fetch" / "qa-fake-internet",
        ["good.example.test", "evil.example.test"],
        labels=labels,
    ) as net:
        backend = AllowlistBackend(docker_backend, image, ["good.example.test"], upstream=net.name, labels=labels)
        sandbox = backend.start(SandboxSpec(image=image, network="bridge", labels=labels))
        with sandbox:
            assert sandbox.exec(["printenv", "HTTP_PROXY"]).stdout.strip() == "http://egress-proxy:3128"
            res = sandbox.exec(["python3", "-c", FETCH, "good.example.test", "evil.example.test"], timeout=60)
            out = json.loads(res.stdout.strip().splitlines()[-1])
            proxy = sandbox.egress_proxy
        assert out["good.example.test"] == "2.7.1"
        assert out["evil.example.test"].startswith("error: 403")
        assert out["connect good.example.test"] == "HTTP/1.1 200 Connection established | 2.7.1"
        assert out["connect evil.example.test"].startswith("HTTP/1.1 403")
        assert out["direct"].startswith("error")  # the internal network has no other way out
        # The proxy's log is the evidence of what it refused (kept on the sandbox after the proxy is gone).
        assert sandbox.egress_denied == ["DENIED GET evil.example.test:80", "DENIED CONNECT evil.example.test:80"]
        assert proxy.container_id is None
    wait_for(
        lambda: not containers(docker_client, "envqa.run=allowlist-test"),
        20,
        "containers of envqa.run=allowlist-test to be removed",
    )
    assert docker_client.networks.list(filters={"label": "envqa.run=allowlist-test"}) == []


def test_allowlist_task_passes_through_the_proxy_and_is_declared(probe_ctx, tmp_path, docker_client):
    """The egress probe on an allowlist task: its open run goes through the proxy (allowed host) and passes,
    the cut run fails; the network need is declared, so the finding is only informational."""
    from envqa.probes.network.egress import egress_probe

    src = EXAMPLES / "network-fetch"
    toml = (
        (src / "task.toml")
        .read_text()
        .replace("[agent]\n", '[agent]\nnetwork_mode = "allowlist"\nallowed_hosts = ["releases.example.test"]\n')
    )
    env = write_env(
        tmp_path,
        {
            "task.toml": toml,
            "instruction.md": (src / "instruction.md").read_text(),
            "solution/solve.sh": (src / "solution" / "solve.sh").read_text(),
            "tests/test.sh": (src / "tests" / "test.sh").read_text(),
        },
    )
    ctx = probe_ctx(
        env,
        run_id="allowlist-egress",
        fake_internet_dir=src / "qa-fake-internet",
        fake_internet_hosts=["releases.example.test"],
    )
    [f] = egress_probe(ctx)
    assert f.severity == "info" and f.rule == "network-dependent-pass"
    assert [t.outcome for t in ctx.new_trials] == ["pass", "fail"]
    assert any("connect" in line and ":3128" in line for line in f.evidence)  # the oracle reached the proxy
    wait_for(
        lambda: not containers(docker_client, "envqa.run=allowlist-egress"),
        20,
        "containers of envqa.run=allowlist-egress to be removed",
    )
    assert docker_client.networks.list(filters={"label": "envqa.run=allowlist-egress"}) == []


def test_allowlist_without_the_host_blocks_the_fetch(probe_ctx, tmp_path):
    from envqa.probes.network.egress import egress_probe

    src = EXAMPLES / "network-fetch"
    toml = (
        (src / "task.toml")
        .read_text()
        .replace("[agent]\n", '[agent]\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]\n')
    )
    env = write_env(
        tmp_path,
        {
            "task.toml": toml,
            "instruction.md": (src / "instruction.md").read_text(),
            "solution/solve.sh": (src / "solution" / "solve.sh").read_text(),
            "tests/test.sh": (src / "tests" / "test.sh").read_text(),
        },
    )
    ctx = probe_ctx(
        env,
        run_id="allowlist-blocked",
        fake_internet_dir=src / "qa-fake-internet",
        fake_internet_hosts=["releases.example.test"],
    )
    assert egress_probe(ctx) == []
    [opened] = ctx.new_trials  # the open run already fails: the proxy refused releases.example.test
    assert opened.outcome == "fail" and opened.purpose == "hunt-egress-open"
    log = (ctx.layout.trial_dir(opened.trial_id) / "egress-proxy.log").read_text()
    assert "DENIED GET releases.example.test:80" in log


def test_an_allowlist_trial_gets_its_network_only_through_the_proxy(qa_config, docker_backend, docker_client, tmp_path):
    """Any trial (validation too), not only the probes': with trials allowed a network, an allowlist task's
    oracle reaches its allowed host through the proxy; with the host not listed, the same fetch is refused."""
    from envqa.agents.trial import run_trial
    from envqa.core.environment import load_environment
    from envqa.core.layout import RunLayout
    from envqa.core.models import TrialSpec
    from envqa.sandbox.network import FakeInternet

    src = EXAMPLES / "network-fetch"
    outcomes = {}
    with FakeInternet(
        docker_client,
        qa_config.sandbox.base_image,
        src / "qa-fake-internet",
        ["releases.example.test"],
        labels={"envqa.run": "allowlist-trial"},
    ) as net:
        cfg = qa_config.model_copy(
            update={
                "sandbox": qa_config.sandbox.model_copy(update={"default_network": "public"}),
                "probes": qa_config.probes.model_copy(update={"egress_network": net.name}),
            }
        )
        for hosts in (["releases.example.test"], ["pypi.org"]):
            toml = (
                (src / "task.toml")
                .read_text()
                .replace("[agent]\n", f'[agent]\nnetwork_mode = "allowlist"\nallowed_hosts = {json.dumps(hosts)}\n')
            )
            env = load_environment(
                write_env(
                    tmp_path / hosts[0],
                    {
                        "task.toml": toml,
                        "instruction.md": (src / "instruction.md").read_text(),
                        "solution/solve.sh": (src / "solution" / "solve.sh").read_text(),
                        "tests/test.sh": (src / "tests" / "test.sh").read_text(),
                    },
                )
            )
            spec = TrialSpec(run_id="allowlist-trial", env_version=env.version, agent="oracle", index=0)
            outcomes[hosts[0]] = run_trial(
                spec, env, docker_backend, cfg, RunLayout(cfg.runs_dir, "allowlist-trial")
            ).outcome
    assert outcomes == {"releases.example.test": "pass", "pypi.org": "fail"}
    wait_for(
        lambda: not containers(docker_client, "envqa.run=allowlist-trial"),
        20,
        "containers of envqa.run=allowlist-trial to be removed",
    )
    assert docker_client.networks.list(filters={"label": "envqa.run=allowlist-trial"}) == []
