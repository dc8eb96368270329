"""Every tuning constant of envqa, in one place: intervals, leases, budgets, limits, timeouts, poll periods.

A value here is a choice (how long to wait, how much to keep), not a fact of a format we read: Harbor's and
Terminal-Bench's own defaults stay with their readers (core/task_config.py, core/environment.py). The
configuration models (core/config.py) take their defaults from here, so `qa.toml` can override what they
expose; the rest are read by the modules named in each note. Change a value here, never a copy of it.
Values are plain numbers (seconds, bytes, characters, counts), so this module imports nothing of ours and
every layer may read it.
"""

from __future__ import annotations

# --- configuration defaults (core/config.py; docs/reference/configuration.md) ---------------------------------

ORACLE_RUNS = 3
"""`oracle_runs`: oracle runs each stage wants unless its own key says otherwise."""

HUNT_MIN_ORACLE_RUNS = 5
"""The hunt calls an oracle failure among passes flaky; it wants at least this many runs in all (validation's
count towards them) unless `[probes] oracle_runs` says otherwise. See QAConfig.oracle_runs_for."""

NOP_RUNS = 1
"""`[validate] nop_runs`: runs of the agent that does nothing (each must fail)."""

SANDBOX_PIDS_LIMIT = 1024
"""`[sandbox] pids_limit`: processes per container (stops a fork bomb)."""

SANDBOX_OUTPUT_LIMIT_BYTES = 1024 * 1024
"""`[sandbox] output_limit_bytes`: output kept per command (head and tail)."""

SANDBOX_EXEC_TIMEOUT_SEC = 600.0
"""`[sandbox] exec_timeout_sec`: a command with no timeout of its own is killed after this."""

SCHEDULER_WORKERS = 2
"""`[scheduler] workers`: worker processes embedded mode starts."""

LEASE_TTL_SEC = 30.0
"""`[scheduler] lease_ttl_sec`: a dead worker's slot (and its trial's lease) comes back after this."""

WORKER_POLL_INTERVAL_SEC = 0.05
"""`[scheduler] poll_interval_sec`: an idle worker's wait between claims."""

JOB_TIMEOUT_SEC = 7200
"""`[scheduler] job_timeout_sec`: rq's timeout for one job (then the job fails with `job_timeout`)."""

MAX_RESTARTS = 5
"""`[scheduler] max_restarts`: worker loop restarts allowed within RESTART_WINDOW_SEC before it stops."""

RESTART_WINDOW_SEC = 60.0
"""`[scheduler] restart_window_sec`: the window MAX_RESTARTS counts in."""

RESTART_BACKOFF_SEC = 0.2
"""`[scheduler] restart_backoff_sec`: the first restart delay; doubles, capped at RESTART_BACKOFF_MAX_SEC."""

STALL_TIMEOUT_SEC = 600.0
"""`[scheduler] stall_timeout_sec`: Redis mode exits 3 when a queue holds work this long with no live worker."""

QUEUE_CONCURRENCY = 4
"""`[scheduler.defaults] concurrency`: jobs of one queue running at once, over all hosts."""

SANDBOX_QUEUE_CONCURRENCY = 2
"""`[scheduler.sandbox] concurrency`: trials (containers) running at once."""

QUEUE_MAX_ATTEMPTS = 3
"""`[scheduler.defaults] max_attempts`: runs allowed for transient failures."""

QUEUE_BACKOFF_BASE_SEC = 2.0
"""`[scheduler.defaults] backoff_base_sec`: the first retry delay; doubles each time."""

QUEUE_BACKOFF_MAX_SEC = 120.0
"""`[scheduler.defaults] backoff_max_sec`: the longest retry delay."""

QUEUE_JITTER = 0.5
"""`[scheduler.defaults] jitter`: the fraction of a retry delay randomised away."""

QUEUE_PARK_DEFAULT_SEC = 30.0
"""`[scheduler.defaults] park_default_sec`: park time for a 429/529 with no Retry-After."""

QUEUE_MAX_PARKS = 200
"""`[scheduler.defaults] max_parks`: rate-limit parks before a job gives up."""

SWEEP_TRIALS = 5
"""`[sweep] trials`: trials per model in a fixed sweep."""

SWEEP_N_MIN = 3
"""`[sweep] n_min`: adaptive sweep, trials per model before it may stop."""

SWEEP_N_MAX = 90
"""`[sweep] n_max`: adaptive sweep, trials per model at most."""

SWEEP_BATCH = 2
"""`[sweep] batch`: trials per model scheduled between two checks. 2 keeps two trials of a model in flight while
spending <= 40% of a fixed n=30 sweep (benchmarks/adaptive.py)."""

SWEEP_BAND_LOW = 0.10
"""`[sweep] band_low`: the target band's lower pass@1."""

SWEEP_BAND_HIGH = 0.30
"""`[sweep] band_high`: the target band's upper pass@1."""

SWEEP_STOP_TRIAL_COST = 0.0055
"""`[sweep] stop_trial_cost`: the price of one trial in units of a wrong band call; chosen on
benchmarks/adaptive.py's tuning seeds (never on the seeds it scores)."""

SWEEP_STOP_PRIOR = 0.5
"""`[sweep] stop_prior`: the Beta(prior, prior) prior on a model's pass rate."""

SWEEP_REPORT_CONFIDENCE = 0.95
"""`[sweep] report_confidence`: the Wilson level of reported confidence intervals."""

PROVIDER_TIMEOUT_SEC = 120.0
"""`[providers.*] timeout_sec`: one model request's timeout."""

PROVIDER_TRANSIENT_RETRIES = 2
"""`[providers.*] transient_retries`: our retries of 5xx and connection errors."""

PROVIDER_RETRY_BACKOFF_SEC = 0.5
"""The first delay between two of those retries (providers/_retry.py); doubles each time."""

SOLVER_MAX_STEPS = 40
"""`[solver] max_steps`: model turns per trial."""

SOLVER_MAX_TOKENS_PER_TRIAL = 2_000_000
"""`[solver] max_tokens_per_trial`: tokens per trial, then it stops."""

SOLVER_MAX_OUTPUT_TOKENS = 4096
"""`[solver] max_output_tokens`: per solver call."""

SOLVER_COMMAND_TIMEOUT_SEC = 120.0
"""`[solver] command_timeout_sec`: one bash command's timeout."""

SOLVER_OBSERVATION_CHARS = 10_000
"""`[solver] observation_chars`: a command's output kept for the model."""

STRUCTURED_RETRIES = 2
"""`[solver] structured_retries`: re-asks after an invalid structured answer (also the analyst's default)."""

PROBE_SOLVER_REPLAYS = 3
"""`[probes] solver_replays`: suspicious sweep passes replayed under strace, at most."""

PROBE_VERIFIER_RERUNS = 2
"""`[probes] verifier_reruns`: verifier re-runs on the oracle's end state."""

PROBE_MAX_MUTATED_FILES = 6
"""`[probes] max_mutated_files`: oracle output files mutation testing damages."""

PROBE_MAX_VARIANTS = 6
"""`[probes] max_variants`: verifier runs the variation probe may spend on the oracle's end state."""

REVISER_MAX_REPAIRS = 2
"""`[reviser] max_repairs`: reviser retries after a failed gate."""

REVISER_MAX_OUTPUT_TOKENS = 8192
"""`[reviser] max_output_tokens`: per reviser call."""

GENERATOR_MAX_REPAIRS = 2
"""`[generator] max_repairs`: further attempts after a failed build/oracle/nop/lint."""

GENERATOR_MAX_OUTPUT_TOKENS = 16384
"""`[generator] max_output_tokens`: per generator call."""

SLACK_SEND_BUDGET_SEC = 20.0
"""`[slack] send_budget_sec`: one message's retries stop after this."""

SLACK_FLUSH_TIMEOUT_SEC = 30.0
"""`[slack] flush_timeout_sec`: a run's end waits this long for Slack."""

ANALYST_MIN_AGREEING = 3
"""`[analyst] min_agreeing`: trials (across >= 2 models) a label needs to be the task's."""

ANALYST_TRAJECTORY_TOKENS = 6000
"""`[analyst] trajectory_tokens`: the budget for the compressed trajectory (also probes/analyst/model.py's default)."""

ANALYST_MAX_OUTPUT_TOKENS = 2048
"""`[analyst] max_output_tokens`: per analyst call."""

ANALYST_WAIT_SEC = 1800.0
"""`[analyst] wait_sec`: how long the graph waits for queued analyst jobs."""

HUNTER_TRIALS = 2
"""`[hunter] trials`: LLM hunter trials per version."""

LOOP_MAX_ITERATIONS = 3
"""`[loop] max_iterations`: revisions adopted before the revise loop stops."""

# --- scheduler: following jobs, workers, leases (scheduler/) --------------------------------------------------

FOLLOW_POLL_SEC = 0.1
"""How often a caller following its jobs reads the store (scheduler/rq_executor.py, scheduler/calls.py)."""

RECONCILE_SEC = 5.0
"""How often a waiting caller puts back the jobs Redis lost (scheduler/rq_executor.py, scheduler/calls.py)."""

CALL_DEADLINE_SEC = 3600.0
"""`[scheduler] call_deadline_sec`: how long `Executor.run_call` waits for one model call (the reviser, the
generator) by default."""

FOLLOW_DEADLINE_SEC = 86400.0
"""`[scheduler] follow_deadline_sec`: how long a caller waits for a batch of queued trials or probe jobs
(scheduler/rq_executor.py); the stall check ends a wait nobody works on much sooner."""

STALL_CHECK_SEC = 1.0
"""How often a follower checks for queues with work and no live worker (scheduler/follow.py)."""

STALL_REPORT_AFTER_SEC = 5.0
"""A queue stalled this long is reported as waiting (before STALL_TIMEOUT_SEC ends the run)."""

LOST_RECHECK_SEC = 1.0
"""A job that looks lost is checked again after this before it is put back (scheduler/dispatch.py)."""

JOB_RESULT_TTL_SEC = 3600
"""How long rq keeps a finished job's result in Redis (scheduler/dispatch.py)."""

JOB_FAILURE_TTL_SEC = 7 * 86400
"""How long rq keeps a failed job in Redis (scheduler/dispatch.py)."""

LOST_SEEN_TTL_SEC = 3600
"""How long the mark "this job looked lost once" stays in Redis (scheduler/dispatch.py)."""

PARK_REDIRECTS = 10**6
"""rq retries allowed for parks: a Retry returned for a park is never what ends a job; max_parks does
(meta["parks"]) (scheduler/dispatch.py)."""

PARK_SETTLE_SEC = 1.0
"""A parked queue's job that comes back with at most this much of the park left waits it out in place instead of
another Retry (scheduler/dispatch.py). rq's scheduled registry holds whole seconds, truncated, so a job asked back
for the park's end is due up to a second before it; another Retry then cost one to two more seconds (a score a
second later, then rq's scheduler's one-second poll), for every job of the model. Holding the worker and the
model's slot for under this long is cheaper, and the body still never runs before the Retry-After."""

RESTART_BACKOFF_MAX_SEC = 5.0
"""The cap on a worker loop's restart delay (scheduler/worker.py)."""

WORKER_TTL_SEC = 25
"""rq's worker TTL: rq heartbeats an idle worker every ttl - 15 s; a dead idle one drops out after ttl."""

PARENT_GRACE_SEC = 10.0
"""A pool's worker whose parent died gets SIGTERM, then exits after this (scheduler/worker.py)."""

IDLE_RELOAD_SEC = 1
"""`qa worker --queues '*'`: how long idle before the queue list is read again (scheduler/worker.py)."""

IDLE_RELOAD_MAX_SEC = 3
"""`qa worker --queues '*'`: the idle wait above doubles while the queue list stays the same, up to this and
to one lease (an idle rq worker's maintenance runs between two waits) (scheduler/worker.py). Under
STALL_REPORT_AFTER_SEC, so a queue that appears is served before a run reports it stalled."""

MAINTENANCE_LOCK_SEC = 899
"""rq's Queue.acquire_maintenance_lock period, mirrored by scheduler/jobs.py."""

STALE_LOCK_SEC = 60
"""A queue-cleaning lock older than this is stale: cleaning a queue takes well under it (scheduler/jobs.py)."""

LEASED_MARK_SEC = 120
"""A worker name stays known as watched this long after its last beat, at least 10 x its TTL
(scheduler/lease.py)."""

UNWATCHED_LEASES = 10
"""A worker never seen beating is dead after this many lease TTLs without a heartbeat (scheduler/lease.py) ..."""

UNWATCHED_MIN_SEC = 30.0
"""... and at least this long (a stock rq worker's job reaches our code well within it)."""

PUBSUB_RELEASE_SEC = 2.0
"""How long a stopping worker waits for its pub/sub thread (scheduler/rq_adapter.py)."""

REDIS_START_SEC = 10.0
"""How long an embedded redis-server gets to answer a ping (scheduler/embedded.py)."""

REDIS_PING_CONNECT_SEC = 0.2
"""The socket connect timeout of each readiness ping of an embedded redis-server."""

PROCESS_EXIT_WAIT_SEC = 10
"""How long a stopped child process (redis-server, a pool worker) gets to exit before it is killed."""

POOL_STOP_GRACE_SEC = 15.0
"""How long an embedded worker pool's workers get after SIGTERM before SIGKILL (scheduler/embedded.py)."""

# --- sandbox (sandbox/, core/sandbox.py) -------------------------------------------------------------------------

DOCKER_API_TIMEOUT_SEC = 120
"""The Docker API client's timeout for one request (sandbox/docker_sandbox.py, sandbox/docker_backend.py)."""

SANDBOX_SETUP_EXEC_SEC = 60
"""A setup command qa runs in a container (mkdir, chmod, a step's reset) is killed after this."""

STEP_SETUP_TIMEOUT_SEC = 600.0
"""A step's workdir/setup.sh (Harbor sets none; nothing here waits without bound) (agents/steps.py)."""

SIDECAR_READY_MIN_SEC = 60.0
"""The least the wait for compose sidecars to be running/healthy may be (sandbox/sidecars.py)."""

SIDECAR_READY_MAX_SEC = 600.0
"""The most that wait may be: in between, the healthchecks' own budget."""

SIDECAR_POLL_SEC = 0.2
"""How often that wait looks at the sidecars' state."""

NETWORK_READY_SEC = 30.0
"""How long a fake-internet or egress-proxy container gets to answer (sandbox/network.py)."""

STRACE_ATTACH_SEC = 10.0
"""How long host strace gets to attach to a container's init (sandbox/strace.py)."""

DISK_WATCH_INTERVAL_SEC = 1.0
"""How often the writable-layer size of a container is measured against its limit (sandbox/limits.py)."""

WATCHER_JOIN_SEC = 5
"""How long a stopping watcher thread is waited for (sandbox/limits.py)."""

RESOLVE_PROBE_SEC = 2.0
"""The DNS probe's timeout that tells whether a verifier could reach the internet (core/network_policy.py)."""

# --- store (store/) ------------------------------------------------------------------------------------------------

SQLITE_BUSY_TIMEOUT_SEC = 30
"""How long a SQLite writer waits for the lock (store/db.py; busy_timeout is this in ms)."""

POSTGRES_CONNECT_SEC = 5
"""psycopg's connect timeout to the shared store (store/postgres.py)."""

POSTGRES_RETRY_SEC = 60.0
"""How long a lost Postgres connection is retried before the error surfaces (store/postgres.py)."""

PG_SERVER_START_SEC = 30.0
"""How long a private postgres server gets to accept connections (store/pg_server.py)."""

PG_COMMAND_SEC = 120
"""initdb and other postgres commands are killed after this (store/pg_server.py)."""

PG_STOP_SEC = 30
"""How long a stopping postgres server gets before SIGKILL (store/pg_server.py)."""

MAX_FILE_BYTES = 2 * 1024 * 1024
"""A shared store keeps an artifact file up to this, before compression (store/shared_files.py)."""

MAX_TRIAL_BYTES = 16 * 1024 * 1024
"""All of one trial's files in a shared store, before compression."""

MAX_BUNDLE_BYTES = 64 * 1024 * 1024
"""One environment's tar.gz in a shared store."""

ENV_CACHE_SIZE = 64
"""Parsed environments kept per process, by root and content hash (core/environment.py)."""

# --- reading traces and logs (core/readers/) -------------------------------------------------------------------------

MESSAGE_MAX = 2_000
"""A test's failure text kept from an imported trial."""

OBSERVATION_MAX = 4_000
"""One trajectory step's observation kept from an imported trial."""

VERIFIER_TAIL = 8_000
"""The tail of the verifier's stdout kept on an imported trial."""

LOG_HEAD = 4 * 1024 * 1024
"""At most this much of an agent's session log is read."""

JSON_MAX = 256 * 1024 * 1024
"""A result/trajectory file larger than this is refused, not read."""

JSON_DEPTH_MAX = 200
"""A JSON file nested deeper than this is refused by name (core/input_files.py), before Python's parser would
raise RecursionError; real results and trajectories nest a dozen levels."""

JSON_DEPTH_SCAN_MAX = 4 * 1024 * 1024
"""A JSON text longer than this is not scanned for its depth before parsing (a Python loop, ~0.15 s per MB): its
parser's own RecursionError is caught and named instead (core/input_files.py)."""

TASK_SCRIPT_MAX = 1024 * 1024
"""A task's shell script or Dockerfile larger than this is refused by name when the task loads (core/task_tree.py):
the shell parser takes seconds per 100 KB of odd text, and the largest real test.sh or solve.sh we have seen is
73 KB."""

TASK_SOURCE_MAX = 4 * 1024 * 1024
"""A task's Python, Markdown, TOML or YAML file larger than this is refused by name when the task loads
(core/task_tree.py): the rules parse each; real ones are under 20 KB."""

INPUT_FILE_MAX = 64 * 1024 * 1024
"""A task or config file larger than this is refused by name, not read (core/input_files.py); logs are read by
head or tail instead."""

MAX_DEPTH = 3
"""A folder of jobs/runs is searched at most this deep below a given path ("runs/nightly/<run>")."""

GUARD_MAX_BYTES = 400_000
"""A verifier script larger than this is not read for its guards (core/consistency/guards.py)."""

PROVENANCE_MAX_CONTEXT_FILES = 2000
"""A Dockerfile COPY of a folder lists at most this many of its files as the image's (core/task_model/provenance.py):
past it a huge build context would cost `qa lint` its second; later files count as the agent's (quiet)."""

PROVENANCE_MIN_HELPER_BYTES = 80
"""A verifier file and an image file with the same bytes are one helper in both places only from this size on
(probes/static/provenance_rules.py): below it the match is an empty `__init__.py` or a one-line shim that any
two folders may share by chance."""

# --- probes (probes/) --------------------------------------------------------------------------------------------------

PROBE_QUICK_EXEC_SEC = 30
"""A probe's quick command in a container (pwd, stat, rm -f, test -e) is killed after this."""

PROBE_EXEC_SEC = 60
"""A probe's ordinary command (clear /logs/verifier, plant a file, a short script) is killed after this."""

PROBE_SCAN_EXEC_SEC = 120
"""A probe's walk over a container's files (a snapshot, digests, copies) is killed after this."""

IMAGE_SCAN_EXEC_SEC = 180
"""The image scan for leaked literals and archives (probes/static/image_checks.py) is killed after this."""

VARIATION_BUILD_SEC = 120.0
"""A variant's build command in the variation probe (probes/variation/probe.py)."""

VARIATION_MAX_FILES = 12
"""Output files the variation probe looks at (the instruction's named outputs first)."""

VARIATION_MAX_EXTRA_DIRS = 4
"""Directories beyond the named outputs the variation probe looks in."""

MUTATION_MAX_BYTES = 1024 * 1024
"""A file larger than this is not mutated (probes/mutation/probe.py)."""

MUTATION_MAX_CANDIDATES = 400
"""Changed paths checked for "regular file, small enough" (a pip install changes thousands)."""

MAX_TEST_BYTES = 512 * 1024
"""A test file larger than this is not read (probes/mutation/kinds.py, probes/mutation/tolerance.py)."""

NOP_MAX_DIGEST_FILES = 40
"""Files the nop-cause probe digests (probes/nop/cause.py)."""

NOP_MAX_DIGEST_BYTES = 64 * 1024 * 1024
"""The most bytes the nop-cause probe digests in all."""

NOP_MAX_REPORT_BYTES = 4 * 1024 * 1024
"""The most of a test report the nop-cause probe reads."""

VARIATION_MAX_BUILD_COMMANDS = 3
"""Build commands the variation probe takes from the instruction, in order (probes/variation/kinds.py)."""

VERIFIER_WRITES_MAX_ENTRIES = 100_000
"""File-system entries a verifier-writes snapshot lists (probes/verifier_writes.py)."""

VERIFIER_SHAPE_MAX_WALK = 5000
"""Entries of the build context looked at (names and small texts) (probes/static/verifier_shape_rules.py)."""

VERIFIER_SHAPE_MAX_LITERALS = 3
"""At most this many literals pinned by the verifier for `verifier-literal-only` (core/task_model/checks.py,
probes/static/verifier_shape_rules.py): more is a real spec, not a hard-coded answer."""

TEST_MODEL_CODE_CHARS = 160
"""The test model keeps this many characters of a comparison's or a call's code (core/task_model/cases.py)."""

EXPLOIT_REHEARSE_SEC = 120.0
"""How long an exploit's rehearsal in a container may take (agents/exploits.py)."""

PIP_FREEZE_SEC = 120
"""`pip freeze` in a container, for the pin fixer (agents/fixers/pins.py)."""

SOLVER_PWD_SEC = 10
"""The solver's first `pwd` in its container (agents/solver.py)."""

# --- model prompts (agents/, graphs/) ----------------------------------------------------------------------------------

REVISER_MAX_FILE_CHARS = 12_000
"""A task file longer than this is cut in the reviser's prompt (agents/reviser.py)."""

ANALYST_FILE_CHARS = 6000
"""A task file longer than this is cut in the analyst's prompt (probes/analyst/model.py)."""

GENERATOR_MAX_SEED_CHARS = 8_000
"""A seed file longer than this is cut in the generator's prompt (agents/generator.py)."""

GENERATE_LOG_TAIL = 3000
"""Characters of a failed build/oracle log fed back to the generator (graphs/generate.py)."""

# --- notifications, reports, CI output (core/notify.py, app/) ------------------------------------------------------------

NOTIFY_TIMEOUT_SEC = 10.0
"""How long one notifier (a webhook) gets (core/notify.py)."""

SLACK_MAX_RETRIES = 5
"""Slack SDK retries of one request (app/slack/client.py)."""

SLACK_RETRY_BACKOFF = 0.5
"""The Slack SDK's backoff factor between those retries."""

SLACK_DIFF_EXCERPT_LINES = 40
"""Lines of a proposal's diff shown in its Slack message; the whole diff is attached (app/slack/blocks.py)."""

WEBHOOK_BUDGET_SEC = 10.0
"""A Slack webhook post's timeout (app/slack/client.py)."""

SLACK_GROUP_CACHE_SEC = 60.0
"""How long a Slack user group's members are cached when checking an approver (app/slack/interactivity.py)."""

REDIS_STATUS_CONNECT_SEC = 5
"""`qa queues`: the socket connect timeout to Redis."""

DATASET_STOP_GRACE_SEC = 15.0
"""Ctrl-C on a dataset run: how long the task threads get to wind down before the last container sweep."""

DATASET_POOL_STOP_SEC = 5.0
"""A dataset run's worker pool, at the end: the grace before its workers are killed (app/dataset_run.py)."""

REPORT_TEXT_LIMIT = 4000
"""Characters kept of one observation, message or artifact file in the HTML report (head + tail)."""

REPORT_FILE_LIMIT = 8000
"""Characters kept of one artifact file the HTML report shows in full view."""

REPORT_RUNS_LISTED = 500
"""Runs on the HTML report's index page, newest first."""

REPORT_DATASETS_LISTED = 200
"""Datasets on the HTML report's index page, newest first."""

CI_BUDGET = 60_000
"""What the folded sections of a CI comment may use, leaving room for the table (GitHub's limit is 65,536)."""

CI_EVIDENCE_LINES = 40
"""Lines of evidence shown per finding in CI output."""

ANALYZE_BUDGET = 60_000
"""What the folded sections of `qa analyze` markdown output may use (app/analyze_output.py)."""

DATASET_EVIDENCE_CHARS = 4000
"""Per finding in a dataset report: the task's own report has the rest."""

# Cross-trial calibration (issue 41), measured on the labelled leaderboard runs (tb1-labels.csv).
CROSS_TRIAL_MIN_AGENTS = 3
"""A test failing alone counts only across this many different agents (by name: one agent on three models is one
reading of the instruction, not three); the hand-built rule tests use exactly three."""
CROSS_TRIAL_NEAR_CEILING = 0.8
"""Pooled pass@1 at or above this: the few failures of a task nearly everyone passes say little about the task."""
CROSS_TRIAL_ALONE_SHARE = 0.9
"""Without converging values, a test must account for this share of the failed trials to be a warning: a hard
task's core test also fails alone often, but rarely in nine of ten failures (labelled runs: 0.61 to 0.69)."""
CROSS_TRIAL_MIN_CONVERGING = 3
"""Converging wrong answers need at least this many failed trials ending with the same value."""
CROSS_TRIAL_CONVERGING_SHARE = 0.5
"""...and that value must be what most failed trials of the test that state a value end with: many different wrong
values with one shared by a few is a hard task, not a second reading."""
CROSS_TRIAL_MISSING_SHARE = 0.9
"""A path the verifier reports missing in at least this share of failed trials (with verifier output), across
two agents and CROSS_TRIAL_MIN_AGENTS agent/models: the test looks for a file no agent wrote, a name the task never gave them."""
CROSS_TRIAL_UNSTATED_SHARE = 0.5
"""failures-on-unstated-requirement (issue 53 item 3): the checks requiring one unstated term must account for at
least this share of the failed trials (most of them); the setups they span are sized to the panel
(probes/cross_trial/evidence.py, `unstated-setups`)."""
CROSS_TRIAL_MISSING_MIN_FAILED = 8
"""Failed trials with verifier output a missing-file finding needs at the least: fewer say nothing about "nearly
every failure"."""
COPIED_BLOCK_MIN_LINES = 3
"""A copied expected block (a map, a table) has at least this many lines..."""
COPIED_BLOCK_MIN_CHARS = 12
"""...and this many visible characters: a one-word value is a literal, compared as one, not a block."""
TRANSCRIPT_PROMPT_MAX = 16_000
"""The tail of what an installed agent's log shows before its step 1 (its prompt, with the task's instruction),
kept so that a value the agent was told is never taken for a copied one."""

# Real-task accuracy (issue 42), read on the TB2 dev split (tb2-unchanged-dev.csv controls).
JUNIOR_ESTIMATE_MAX_DAYS = 91.0
"""probes/static/metadata_rules.py: a junior's time estimate is implausible only at or past this many days (a quarter). A
junior's estimate for a hard task of research depth is honestly weeks (the dev split's feal-* say 13 days, fix-ocaml-gc
10), so the expert's one-week bound (seconds or hours written as minutes) does not apply to it."""

# The collateral-damage probe (probes/collateral/, issue 42 item 5) on the oracle's kept end state.
COLLATERAL_MAX_DAMAGES = 3
"""It applies at most this many damages per task (one verifier run each): enough to find a verifier blind to
state beside the outputs, few enough to keep its cost under a tenth of the median `qa run` (~30 s)."""
COLLATERAL_TIME_LIMIT_SEC = 3.0
"""...and starts no new damage once this many seconds went to them (coverage then names the damages not tried):
a verifier that takes longer than this to run gets one damage, not three."""
COLLATERAL_MAX_RESTORE_BYTES = 8 * 1024 * 1024
"""A file larger than this is not damaged by the collateral probe: it is read whole to restore it afterwards."""

# `qa lint --online` (issue 52 item 2): asking the archive or index a build uses whether each pinned version is there.
ONLINE_CONNECT_TIMEOUT_SEC = 3.0
"""`[online] connect_timeout_sec`: the longest one connection to an apt archive or a Python index may take to open
(sandbox/indexes/http.py); a closed port answers at once, a black hole after this."""
ONLINE_READ_TIMEOUT_SEC = 5.0
"""`[online] read_timeout_sec`: the longest a read may wait for the next bytes of an answer; each answer is also
bounded as a whole by the task's budget (ONLINE_TASK_BUDGET_SEC), so a server that trickles never holds a lint."""
ONLINE_TASK_BUDGET_SEC = 10.0
"""`[online] task_budget_sec`: everything the pin check of one task asks the indexes shares this budget (the cold
goal, issue 52: ≤ 10 s a task); what is not answered by then is one info finding, "pins not checked"."""
ONLINE_CACHE_TTL_SEC = 6 * 3600.0
"""`[online] cache_ttl_sec`: an index's answer (a Packages file's versions, a project's versions) is kept under
QA_HOME/cache/indexes/ this long. Debian and Ubuntu publish their archives four times a day, so an answer older
than that may miss a version the archive dropped since; a warm lint then asks nothing (≤ 2 s a task)."""
ONLINE_MAX_PARALLEL = 8
"""Lookups of one task in flight at once (probes/static/online_pins.py): a task pinning 30 pip packages waits for
four rounds of requests, not thirty."""
ONLINE_MAX_DOWNLOAD_BYTES = 64 * 1024 * 1024
"""The largest answer read from an index (compressed, as sent): Debian's main Packages.xz is about 9 MB and
Ubuntu's universe about 20 MB; anything larger is not an index, and is not checked."""
ONLINE_MAX_INDEX_BYTES = 512 * 1024 * 1024
"""The largest Packages file decompressed (bookworm main: about 47 MB): a decompression bomb stops here."""
ONLINE_APT_CACHE_SEC = 5.0
"""The host's `apt-cache` (madison, policy) is given this long per call before its answer is left out."""

DATASET_CONVENTION_SHARE = 0.5
"""A dataset run: a rule whose warnings are on more than this share of the dataset's tasks is a convention of that
dataset, reported once for the dataset instead of on each task (app/dataset_conventions.py)."""

DATASET_CONVENTION_MIN_TASKS = 5
"""... and on at least this many tasks: three tasks of five agreeing is a coincidence, not a convention."""

ASSERTION_MAX_CALL_DEPTH = 4
"""Helper calls the assertion model follows from a test into the checks they hold (core/task_model/assertion_python.py)."""

ASSERTION_MAX_HELPER_SITES = 100
"""Helper call sites the assertion model follows in one version's tests (each gives its checks once per site).
Helpers that call helpers fan out as a product: one corpus test file reached 116,000 sites and four minutes; the
checks past this are not recorded, which costs only duplicates of checks already read from earlier sites."""

COMPILED_HELPER_SITES = 8
"""Calls of one helper that the compiled-language reader reads a check in that helper through (a record per call,
its parameters bound to the call's arguments: core/task_model/assertion_compiled.py); the calls past this are left,
which costs only more copies of the same check."""

ASSERTION_MAX_DEPTH = 8
"""Nested resolutions of one value in the assertion model: a constant naming a constant naming a helper's return
(core/task_model/assertion_scope.py)."""

ASSERTION_MAX_NODES = 600
"""An expanded expression larger than this is left unexpanded (a table of literal cases stays as written)."""

ASSERTION_MAX_EXPANSIONS = 300
"""Resolutions one top-level value may take: names that feed names grow as a product; past this the rest is left
as written, which only loses how far back a value is followed."""

ASSERTION_COPY_BUDGET = 20_000
"""Nodes all expansions of one version's tests may copy: past this, values are left as written (qa lint's 2 s a task)."""

TESTED_TERMS_MAX_DOC_BYTES = 200_000
"""The largest document an instruction points to that is read for the terms the tests require
(core/task_model/tested_terms.py)."""

TESTED_TERMS_MAX_DOCS = 20
"""Documents read per task for those terms."""

TESTED_TERMS_MAX_WALK = 2000
"""Files listed when looking for a document the instruction names."""

TESTED_TERMS_MIN_KEY_CHARS = 2
"""`id`, `ok`, `x`: a key this short is a convention, not a name the instruction must give."""

OUTCOME_WEAK_CHARS = 2
"""A substring this short (or a number of this many digits) is in most outputs: `check-does-not-measure-outcome`
(probes/static/outcome_checks.py), weak-substring."""
