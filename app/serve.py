"""`qa serve`: the HTTP side of envqa — Slack's interactivity endpoint, and (issue 14) the run list and
HTML reports.

Built on Starlette + uvicorn: Starlette is a small, well-kept ASGI toolkit (plain routes, request bodies
as bytes, which the Slack signature check needs untouched, no framework magic to learn), and uvicorn is
its standard production server. Both were already locked dependencies.

Routes: `POST /slack/interactivity` (app/slack/interactivity.py), `GET /healthz`, and (app/report_html/routes.py)
`/` (runs and dataset runs), `/runs/<id>/report.html|json`, `/datasets/<id>/report.html` (issue 25).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from envqa.app.report_html.routes import report_routes
from envqa.core.config import QAConfig


async def healthz(request: Request) -> JSONResponse:
    return JSONResponse({"ok": True})


def create_app(config: QAConfig) -> Starlette:
    from envqa.app.slack.interactivity import slack_routes

    routes: list[BaseRoute] = [Route("/healthz", healthz)]
    slack, decider = slack_routes(config)
    routes += slack
    routes += report_routes(config)  # the run list at / and /runs/<id>/report.html (issue 14)
    app = Starlette(routes=routes)
    app.state.config = config
    app.state.slack_decider = decider
    return app


def serve(config: QAConfig, host: str, port: int) -> None:
    import uvicorn

    uvicorn.run(create_app(config), host=host, port=port, log_level="warning", access_log=True)


def startup_info(config: QAConfig, host: str, port: int) -> dict:
    """What `qa serve` prints on start: where it listens, its routes, and what is not set up."""
    from envqa.app.slack.client import SECRET_ENV, TOKEN_ENV, SlackUnavailable, bot_token, signing_secret

    warnings = []
    if signing_secret() is None:
        warnings.append(f"{SECRET_ENV} is not set: /slack/interactivity answers 503 until it is")
    try:
        bot_token()
    except SlackUnavailable:
        warnings.append(f"{TOKEN_ENV} is not set: decisions are recorded but messages cannot be updated")
    if config.slack.channel and not config.slack.approvers:
        warnings.append("[slack] approvers is empty: nobody can decide from Slack (the CLI still can)")
    return {
        "url": f"http://{host}:{port}",
        "routes": ["/healthz", "/slack/interactivity"],
        "slack_channel": config.slack.channel,
        "warnings": warnings,
    }
