"""A fast command's output survives a client slow to read the exec's response (Docker).

The conformance check mkdirs_with_a_mode once failed in a combined run: `stat` printed nothing. The cause
was in the exec, not in mkdirs: docker-py's `exec_start(socket=True)` hands back the raw socket under the
HTTP response, while http.client has read the response head through a buffered reader that, when this
process is slow (a loaded machine), already holds the command's first output frames; reading the raw
socket lost them: exit 0, no output (docker/docker-py#3332). The window is widened here by delaying how
soon every HTTP response head is read (the standard library's parser, not our code), so the output is
always there first; the sandbox must still return it.
"""

from __future__ import annotations

import http.client
import time

import pytest

from envqa.core.sandbox import SandboxSpec


def test_a_fast_commands_output_is_not_lost_when_the_response_is_read_late(docker_backend, base_image):
    with docker_backend.start(SandboxSpec(image=base_image, network="none")) as sb:
        sb.mkdirs("/race/deep", "/race/other", mode=0o700)
        sb.write_file("/race/in.txt", b"x" * 100_000)
        with pytest.MonkeyPatch.context() as mp:
            begin = http.client.HTTPResponse.begin

            def late_begin(self):
                time.sleep(0.3)  # the command has finished, its output is in the socket before the head is read
                return begin(self)

            mp.setattr(http.client.HTTPResponse, "begin", late_begin)
            res = sb.exec(["stat", "-c", "%a", "/race/deep", "/race/other"], timeout=60)
            assert (res.exit_code, res.stdout.split()) == (0, ["700", "700"]), res
            both = sb.exec(["sh", "-c", "echo out; echo err >&2"], timeout=60)
            assert (both.stdout, both.stderr) == ("out\n", "err\n"), both
            big = sb.exec(["cat", "/race/in.txt"], timeout=60)  # more than one frame, the first ones buffered
            assert big.stdout == "x" * 100_000 and big.output_bytes == 100_000
            fed = sb.exec(["cat"], input=b"through stdin\n", timeout=60)
            assert fed.stdout == "through stdin\n", fed
