"""Leaked answers, encrypted: an `openssl enc` file whose password is obvious (here: the task's name), or
published (an adapter's default), or not guessable at all."""

from __future__ import annotations

import shlex

from .conftest import write_env


def _vault(tmp_path, password: str):
    """An image that ships its answer encrypted with `openssl enc`, made by the default base image's own
    openssl at build time (scripts/setup.sh installs it), so the probe is shown working on that image with
    nothing copied from the host."""
    root = tmp_path / "vault-task"
    seal = (
        f"printf 'hello\\n' | openssl enc -aes-256-cbc -pbkdf2 -salt -pass {shlex.quote('pass:' + password)} "
        "-out /opt/data/out.txt.enc"
    )
    return write_env(
        root, {"environment/Dockerfile": f"FROM debian:bookworm\nRUN mkdir -p /opt/data && {seal}\nWORKDIR /app\n"}
    )


def test_encrypted_answer_with_the_task_name_as_password_is_replayed(probe_ctx, tmp_path):
    from envqa.probes.exploits.probe import exploits_probe

    env = _vault(tmp_path, "vault-task")
    ctx = probe_ctx(env, run_id="encrypted-leak", exploits=["exploit-leaked-answers"])
    [f] = exploits_probe(ctx)
    assert f.rule == "exploit-leaked-answers" and f.label == "shortcut"
    transcript = next(line for line in f.evidence if line.startswith("transcript:"))
    assert "decrypted /opt/data/out.txt.enc with password 'vault-task'" in transcript
    assert "copied /tmp/envqa-leak/out.txt -> /app/out.txt" in transcript


def test_a_real_password_keeps_the_answer_sealed(probe_ctx, tmp_path):
    from envqa.probes.exploits.probe import exploits_probe

    ctx = probe_ctx(
        _vault(tmp_path, "k7#Qz!v9-not-obvious"), run_id="encrypted-sealed", exploits=["exploit-leaked-answers"]
    )
    assert exploits_probe(ctx) == [] and ctx.new_trials == []  # the rehearsal found nothing to act on


def test_a_published_adapter_password_opens_the_example_and_the_finding_names_its_source(docker_backend, qa_config):
    """examples/adapter-default-password: a Fernet token keyed the way TheAgentCompany keys its evaluators."""
    from envqa.core.environment import load_environment
    from envqa.probes.static.image_checks import image_findings

    from .conftest import EXAMPLES

    env = load_environment(EXAMPLES / "adapter-default-password")
    tag, _built = docker_backend.ensure_image(env)
    [f] = [f for f in image_findings(env, docker_backend, tag, qa_config) if f.rule == "encrypted-solution-in-image"]
    [ev] = f.evidence
    assert ev.startswith("/opt/task/solution.sh.enc: fernet-encrypted")
    assert "opens with the password 'theagentcompany is all you need'" in ev
    assert "harbor-framework/harbor adapters/theagentcompany/README.md" in ev and "TheAgentCompany" in f.message


def test_the_leaked_answers_exploit_tries_the_published_passwords_and_says_whose(probe_ctx, tmp_path):
    from envqa.probes.exploits.probe import exploits_probe

    ctx = probe_ctx(
        _vault(tmp_path, "theagentcompany is all you need"),
        run_id="encrypted-adapter",
        exploits=["exploit-leaked-answers"],
    )
    [f] = exploits_probe(ctx)
    transcript = next(line for line in f.evidence if line.startswith("transcript:"))
    assert (
        "decrypted /opt/data/out.txt.enc with password 'theagentcompany is all you need' "
        "(the public default of TheAgentCompany (harbor-framework/harbor"
    ) in transcript
