"""The OpenAPI 3.1 description of the whole admin API, served by ``GET /api/v2/openapi.json``.

``openapi_document()`` builds a new dict on every call from the small helpers below; nothing is
cached and nothing at module level is mutable. Every configuration route is described under both
namespaces (``/api/v2/service/...`` and ``/api/v2/hoverfly/...``) with the same operation.
tests/admin/api/test_openapi.py checks that the (method, path) pairs listed here are exactly the routes
admin/api/app.py registers with ``-enable-middleware-api``, so a new route without a description fails.

Response schemas follow the handlers' real answers but stay open (``additionalProperties`` allowed),
so a client generated from them keeps working when a field is added.
"""

from __future__ import annotations

from typing import Any

from sanic import Request
from sanic.response import HTTPResponse

from simproxy.admin.api.openapi_build import (
    Schema,
    array,
    body,
    boolean,
    error,
    integer,
    list_map,
    map_of,
    nullable,
    object_,
    ok,
    op,
    path_param,
    query,
    ref,
    string,
    strings,
    text,
    typed,
)
from simproxy.admin.api.openapi_fleet import PAGE_PATHS, live_paths, page_paths
from simproxy.admin.api.responses import json_response
from simproxy.engine.fleet.config import COUNTERS, MODES
from simproxy.engine.version import VERSION

NAMESPACES = ("service", "hoverfly")
"""The two prefixes of the configuration routes (as in admin.api.app, which imports this module)."""
OPEN_OPERATIONS = frozenset(
    {("get", "/api/health"), ("post", "/api/token-auth"), ("options", "/api/token-auth")}
    | {("get", path) for path in PAGE_PATHS}
)
"""Operations that never need a token, even with ``-auth``."""
PAC = "application/x-ns-proxy-autoconfig"

DESCRIPTION = """\
The admin API of simproxy, an HTTP simulation proxy that speaks Hoverfly's admin API v2.

Request and response bodies are JSON unless an operation says otherwise. Every error is answered
as `{"error": "<message>"}` with `Content-Type: application/json`; a path or method that does not
exist is a 404 (never a 405). Every configuration route answers under `/api/v2/service/...` and,
identically, under `/api/v2/hoverfly/...`.

Authentication: every operation declares the `bearer` scheme, but it is only enforced when the
server was started with `-auth`. Then a token from `POST /api/token-auth` must be sent as
`Authorization: Bearer <token>`, or the call answers 401. `GET /api/health` and the login itself
(`POST` and `OPTIONS /api/token-auth`) never need one. Without `-auth` no token is checked."""

TAGS = (
    ("general", "Health, login, tokens, metrics, shutdown and this document"),
    ("simulation", "The simulation: request matchers paired with responses"),
    ("journal", "The requests the proxy handled, and indexes over them"),
    ("records", "Logs, diff reports, the match cache and the state map"),
    ("configuration", "Mode, destination, middleware, post-serve actions, PAC file, data sources"),
    ("fleet", "What the fleet does now: requests per second, live workers (simproxy's own, for the dashboard)"),
    ("dashboard", "The dashboard page and its files"),
)
COMMON_ERRORS = (
    ("401", "With `-auth`: the bearer token is missing, invalid, expired or logged out."),
    ("500", "An internal error, or the store answered with an error."),
    ("503", "The store (Redis) cannot be reached."),
)
"""Answers any secured operation can give: the token check itself reads the store."""
MALFORMED = "The body is not a JSON object of the expected shape (`Malformed JSON`)."
WHEN = "Epoch seconds or ISO 8601."


# -- component schemas -----------------------------------------------------------------------------------


def _journal_entry() -> Schema:
    request = {**strings("path method destination scheme"), "query": string("The query string, parameters sorted.")}
    request |= {"formData": list_map(), "body": string(), "headers": list_map()}
    request["protocol"] = string(
        "`HTTP/2.0` for a request that came over HTTP/2 (simproxy's own); absent for HTTP/1.x."
    )
    response = {"status": integer(), "body": string("Base64 when `encodedBody` is true."), "encodedBody": boolean()}
    action = strings("name invoked completed correlationId") | {"status": integer()}
    fault = {
        "type": string(
            "`connectionReset`, `emptyResponse`, `malformedChunk`, `randomDataThenClose`, `dribble`, `bandwidth`."
        )
    }
    fault |= {"chunks": integer(), "durationMs": integer(), "bytesPerSecond": integer()}
    response["fault"] = object_(
        fault,
        "type",
        "Only when the answer was written with a fault (simproxy's own): what the client got instead of, or"
        " as well as, this status; a timed fault (`dribble`, `bandwidth`) with its parameters.",
    )
    entry = {
        "request": object_(request, "path method destination scheme query body headers"),
        "response": object_(response | {"headers": list_map()}, "status body encodedBody"),
        "mode": string(),
        "timeStarted": string("When the request arrived (RFC 3339, milliseconds)."),
        "latency": typed("number", "Milliseconds from request to response."),
        "id": string(),
        "postServeAction": nullable(object_(action, "name invoked completed"), "The post-serve action that ran."),
    }
    return object_(entry, "request response mode timeStarted latency id")


def _cache_entry() -> Schema:
    any_object = {"type": "object"}
    closest = object_({"response": any_object, "requestMatcher": any_object, "missedFields": array(string())}, "*")
    entry = {
        "key": string("The md5 key of the request's cacheable fields."),
        "matchingPair": typed("object", "The pair that answered (hits only)."),
        "headerMatch": boolean(),
        "closestMiss": nullable(closest, "The closest pair of a miss."),
    }
    return object_(entry, "key headerMatch closestMiss")


def _diff_group() -> Schema:
    entry = object_(strings("field expected actual"), "*")
    report = object_({"timestamp": string("ISO 8601, UTC."), "diffEntries": array(entry)}, "*")
    return object_({"request": object_(strings("method host path query"), "*"), "diffReports": array(report)}, "*")


def _config_schemas() -> Schema:
    mode = string(enum=list(MODES))
    arguments = {
        "headersWhitelist": array(string(), "Headers captured (capture, spy) or compared (diff); `*` for all."),
        "matchingStrategy": string("`strongest` (default) or `first` (simulate, spy)."),
        "stateful": boolean("Capture repeated requests as a sequence of states."),
        "overwriteDuplicate": boolean("Capture replaces an existing pair for the same request."),
        "captureOnMiss": boolean("Spy: record the real answer of a request no pair matched."),
        "captureDelay": boolean("Capture records the real service's latency as a delay."),
    }
    cors = strings("allowOrigin allowMethods allowHeaders") | {"preflightMaxAge": integer()}
    config = {"cors": ref("Cors"), "destination": string(), "middleware": ref("Middleware"), "mode": mode}
    config |= {"arguments": ref("ModeArguments"), "isWebServer": boolean(), "usage": ref("Usage")}
    action = strings("actionName binary script remote") | {"delayInMs": integer("Wait after the response (ms).")}
    return {
        "Counters": object_({name: integer() for name in COUNTERS}, "*", "Requests answered per mode, fleet-wide."),
        "Usage": object_({"counters": ref("Counters")}, "*"),
        "ModeArguments": object_(arguments, description="Only the arguments the current mode uses are shown."),
        "Mode": object_({"mode": mode, "arguments": ref("ModeArguments")}, "*"),
        "Middleware": object_(strings("binary script remote"), description="A program and script, or a URL."),
        "Cors": object_({"enabled": boolean(), **cors, "allowCredentials": boolean()}, "enabled"),
        "ServiceConfig": object_(config | strings("version upstreamProxy"), "*"),
        "PostServeAction": object_(action, description="`actionName` is left out for the fallback action."),
        "PostServeActions": object_(
            {"actions": array(ref("PostServeAction"), "By name, the fallback last.")}, description="`{}` when none."
        ),
        "CsvDataSources": object_(
            {"csvDataSources": array(object_({"name": string(), "data": string("CSV text.")}, "*"))}, "*"
        ),
    }


def _schemas() -> Schema:
    meta = object_(strings("schemaVersion serviceVersion timeExported"), "schemaVersion")
    data = object_({"pairs": array({"type": "object"}), "globalActions": {"type": "object"}})
    upload_meta = object_({"schemaVersion": string("`v1` to `v5.3`.")}, "*")
    schema_hint = "`GET /api/v2/simulation/schema` gives the full JSON Schema (v5)."
    index = {"name": string(), "entries": array(object_({"key": string(), "journalEntryId": string()}, "*"))}
    page = {"journal": array(ref("JournalEntry")), "indexes": array(ref("JournalIndex"))}
    page |= {"offset": integer(), "limit": integer(), "total": integer("Entries found, before paging.")}
    return {
        "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
        "Simulation": object_({"data": data, "meta": meta}, "*", f"A simulation document. {schema_hint}"),
        "SimulationUpload": object_(
            {"data": {"type": "object"}, "meta": upload_meta}, "meta", f"A simulation, format v1 to v5.3. {schema_hint}"
        ),
        "ImportWarnings": object_(
            {"warnings": array(object_({"message": string()}, "*"))}, "*", "Answered when some pairs were skipped."
        ),
        "JournalEntry": _journal_entry(),
        "JournalIndex": object_(index, "name", "`entries` is left out when the index is empty."),
        "JournalPage": object_(page, "*"),
        "DiffList": object_({"diff": array(_diff_group())}, "*"),
        "CacheList": object_({"cache": array(_cache_entry())}, "*"),
        "State": object_({"state": map_of(string(), "State keys and their values.")}, "*"),
        **_config_schemas(),
    }


# -- paths -----------------------------------------------------------------------------------------------


def _general_paths() -> dict[str, Schema]:
    token = ok("A bearer token (without `-auth`, a fixed dummy token).", object_({"token": string("A JWT.")}, "*"))
    credentials = object_(strings("username password"))
    user = object_({"uuid": string(), "username": string(), "is_admin": boolean()}, "*")
    login_errors = {401: "Wrong credentials.", 429: "Three failed logins: logins are locked for 10 minutes."}
    allow = {"description": "Empty; the `Allow` header lists the methods.", "headers": {"Allow": {"schema": string()}}}
    document = object_({"openapi": string(), "info": {"type": "object"}, "paths": {"type": "object"}}, "*")
    return {
        "/api/health": {"get": op("Health check", ok("Healthy.", object_({"message": string()}, "*")))},
        "/api/token-auth": {
            "post": op(
                "Log in and get a token",
                token,
                login_errors | {int(status): message for status, message in COMMON_ERRORS if status != "401"},
                body=body(credentials, "The credentials; an unreadable body counts as empty ones.", required=False),
            ),
            "options": {"summary": "The methods allowed on the login", "responses": {"200": allow}},
        },
        "/api/refresh-token-auth": {"get": op("Get a new token for the caller", token)},
        "/api/logout": {"get": op("Log out", ok("The caller's token is refused from now on, everywhere."))},
        "/api/users": {"get": op("List the users", ok("No passwords.", object_({"users": array(user)}, "*")))},
        "/metrics": {"get": op("Prometheus metrics of this instance", text("Prometheus text format.", "text/plain"))},
        "/api/v2/shutdown": {"delete": op("Stop the process", ok("Answered first; then every worker exits."))},
        "/api/v2/openapi.json": {"get": op("This OpenAPI document", ok("An OpenAPI 3.1 document.", document))},
    }


def _simulation_paths() -> dict[str, Schema]:
    imported = ok(
        "The new simulation, or the warnings when some pairs were skipped.",
        {"anyOf": [ref("Simulation"), ref("ImportWarnings")]},
    )
    upload = body(ref("SimulationUpload"), "A simulation (v1 to v5.3); it is validated and upgraded to v5.")
    errors = {
        400: "Invalid JSON, an unsupported schema version, or a simulation that fails validation or compilation.",
        500: "A pair names a post-serve action that does not exist, or the store failed.",
    }
    url_pattern = query("urlPattern", "A Go regex on each pair's exact destination + path: only matches are kept.")
    duplicates = "A pair whose request equals an existing pair's is skipped with a warning."
    return {
        "/api/v2/simulation": {
            "get": op(
                "Export the simulation",
                ok("The simulation, always in the v5.3 format.", ref("Simulation")),
                {400: "`urlPattern` is not a valid regex.", 500: "The store failed."},
                params=(url_pattern,),
            ),
            "put": op("Replace the simulation", imported, errors, body=upload),
            "post": op("Append to the simulation", imported, errors, body=upload, description=duplicates),
            "delete": op("Clear the simulation", ok("The empty simulation.", ref("Simulation"))),
        },
        "/api/v2/simulation/schema": {
            "get": op("The simulation's JSON Schema", ok("A JSON Schema (v5 format).", {"type": "object"}))
        },
    }


def _journal_paths() -> dict[str, Schema]:
    page = ok("A page of journal entries.", ref("JournalPage"))
    indexes = ok("Every journal index.", array(ref("JournalIndex")))
    disabled = {500: "The journal is disabled (`-journal-size 0`), or the store failed."}
    search = object_({"request": typed("object", "Request matchers, as in a pair's `request`.")}, "*")
    index = body(object_({"name": string("For example `Request.QueryParam.id`.")}, "name"), "The index.")
    paging = (
        query("limit", "Entries per page (default 500).", integer()),
        query("offset", "Entries skipped (default 0).", integer()),
        query("from", f"Only entries started at or after this time. {WHEN}"),
        query("to", f"Only entries started at or before this time. {WHEN}"),
        query("sort", "`timestarted` or `latency`, optionally followed by `:asc` or `:desc`."),
    )
    return {
        "/api/v2/journal": {
            "get": op("Read the journal", page, {400: "A bad `sort`."} | disabled, params=paging),
            "post": op(
                "Search the journal",
                page,
                {400: "No `request`, or an invalid matcher."} | disabled,
                body=body(search, "The matchers the entries must pass."),
            ),
            "delete": op("Empty the journal and drop its indexes", page, disabled),
        },
        "/api/v2/journal/index": {
            "get": op("List the journal indexes", indexes, disabled),
            "post": op(
                "Add a journal index", indexes, {400: "The index exists, or is not valid."} | disabled, body=index
            ),
        },
        "/api/v2/journal/index/{name}": {
            "delete": op(
                "Drop a journal index",
                indexes,
                {404: "No index by that name."} | disabled,
                params=(path_param("name", "The index's name."),),
            )
        },
    }


def _record_paths() -> dict[str, Schema]:
    record = object_(strings("level msg time"), "*", "A log record; other keys are its fields.")
    logs = ok("The newest records; with `Accept: text/plain`, text lines.", object_({"logs": array(record)}, "*"))
    logs["content"]["text/plain"] = {"schema": string()}
    logs_params = (
        query("limit", "The newest records returned (default 500).", integer()),
        query("from", f"Only records after this time. {WHEN}"),
    )
    diff = ok("The diff reports, grouped per request.", ref("DiffList"))
    diff_filter = object_({"excludedHeaders": array(string()), "excludedResponseFields": array(string())})
    no_cache = {500: "The cache is disabled (`-disable-cache`: `No cache set`), or the store failed."}
    state = ok("The whole state.", ref("State"))
    patch = body(object_({"state": map_of(string())}), "The keys to set; the others are kept.")
    replace = body(ref("State"), "The new state.")
    return {
        "/api/v2/logs": {
            "get": op(
                "Read the log records", logs, {500: "The logs are disabled (`-logs-size 0`)."}, params=logs_params
            )
        },
        "/api/v2/diff": {
            "get": op("Read the diff reports", diff),
            "post": op(
                "Read the diff reports without some entries",
                diff,
                {400: "The body is empty or not a filter object."},
                body=body(diff_filter, "Response headers and JSON paths (`$.a.b`) to leave out."),
            ),
            "delete": op("Delete the diff reports", ok("Deleted.")),
        },
        "/api/v2/cache": {
            "get": op("Read the match cache", ok("Every cached entry.", ref("CacheList")), no_cache),
            "delete": op("Empty the match cache", ok('`{"cache": []}`.', ref("CacheList")), no_cache),
        },
        "/api/v2/state": {
            "get": op("Read the state", state),
            "put": op("Replace the state", state, {400: "No `state`, or a non-string value."}, body=replace),
            "patch": op("Set some state keys", state, {400: "Not JSON, or a value that is not a string."}, body=patch),
            "delete": op("Empty the state", ok("Emptied.")),
        },
    }


def _config_paths(base: str) -> dict[str, Schema]:
    middleware = ok("The middleware (empty strings when none).", ref("Middleware"))
    actions = ok("Every post-serve action.", ref("PostServeActions"))
    csv = ok("Every CSV data source.", ref("CsvDataSources"))
    pac = text("The PAC file.", PAC)
    destination = object_({"destination": string("A Go (RE2) regex on the request's host and path.")}, "*")
    usage = object_({"metrics": ref("Usage"), "usage": ref("Usage")}, "*", "The same counters under both keys.")
    version = object_({"version": string()}, "*")
    upstream = object_({"upstreamProxy": string("Empty when none.")}, "*")
    mode = body(object_({"mode": string(enum=list(MODES)), "arguments": ref("ModeArguments")}, "mode"), "A mode.")
    set_middleware = "Exists only with `-enable-middleware-api` (else 404). The middleware is first run on a sample."
    action = body(ref("PostServeAction"), "A local (binary, script) or remote action; a blank name: the fallback.")
    pac_body = body(string(), "The PAC file; an empty body unsets it.", required=False, media=(PAC, "text/plain"))
    source = body(object_({"name": string(), "data": string("CSV text.")}), "The source's name and CSV text.")
    return {
        base: {"get": op("Read the configuration", ok("The whole configuration.", ref("ServiceConfig")))},
        f"{base}/mode": {
            "get": op("Read the mode", ok("The mode and its arguments.", ref("Mode"))),
            "put": op(
                "Change the mode",
                ok("The new mode and its arguments.", ref("Mode")),
                {400: "An unknown mode, a bad argument, or a mode refused with `-webserver`."},
                body=mode,
            ),
        },
        f"{base}/destination": {
            "get": op("Read the destination", ok("The destination regex.", destination)),
            "put": op(
                "Change the destination",
                ok("The new destination.", destination),
                {400: MALFORMED, 422: "The destination is not a valid regular expression."},
                body=body(destination, "The new destination."),
            ),
        },
        f"{base}/usage": {"get": op("Read the usage counters", ok("Requests per mode, fleet-wide.", usage))},
        f"{base}/version": {"get": op("Read the version", ok("The version.", version))},
        f"{base}/upstream-proxy": {"get": op("Read the upstream proxy", ok("The upstream proxy.", upstream))},
        f"{base}/cors": {"get": op("Read the CORS settings", ok("The CORS settings.", ref("Cors")))},
        f"{base}/middleware": {
            "get": op("Read the middleware", middleware),
            "put": op(
                "Change the middleware",
                middleware,
                {
                    400: MALFORMED,
                    404: "Started without `-enable-middleware-api`.",
                    422: "No binary, or the trial failed.",
                },
                body=body(ref("Middleware"), "The new middleware; all three empty removes it."),
                description=set_middleware,
            ),
        },
        f"{base}/ca-cert": {
            "get": op("Download the CA certificate", text("The CA (PEM) to trust for HTTPS.", "application/x-pem-file"))
        },
        f"{base}/post-serve-action": {
            "get": op("List the post-serve actions", actions),
            "put": op(
                "Set a post-serve action", actions, {400: f"{MALFORMED} Or `remote host is invalid`."}, body=action
            ),
        },
        f"{base}/post-serve-action/{{name}}": {
            "delete": op(
                "Delete a post-serve action",
                actions,
                {400: "No action by that name (`invalid action name passed`)."},
                params=(path_param("name", "The action's name."),),
            )
        },
        f"{base}/pac": {
            "get": op("Read the PAC file", pac, {404: "No PAC file is set (`Not found`)."}),
            "put": op("Set the PAC file", pac, {404: "The body was empty: no PAC file is set now."}, body=pac_body),
            "delete": op("Unset the PAC file", ok("Unset.")),
        },
        f"{base}/templating-data-source/csv": {
            "get": op("List the CSV data sources", csv),
            "put": op("Set a CSV data source", csv, {400: f"{MALFORMED} Or CSV that does not parse."}, body=source),
        },
        f"{base}/templating-data-source/csv/{{name}}": {
            "delete": op(
                "Delete a CSV data source",
                csv,
                {404: "No data source by that name."},
                params=(path_param("name", "The source's name."),),
            )
        },
    }


# -- the document --------------------------------------------------------------------------------


def _groups() -> list[tuple[str, dict[str, Schema]]]:
    config: dict[str, Schema] = {}
    live: dict[str, Schema] = {}
    for ns in NAMESPACES:
        config |= _config_paths(f"/api/v2/{ns}")
        live |= live_paths(f"/api/v2/{ns}")
    return [
        ("general", _general_paths()),
        ("simulation", _simulation_paths()),
        ("journal", _journal_paths()),
        ("records", _record_paths()),
        ("configuration", config),
        ("fleet", live),
        ("dashboard", page_paths()),
    ]


def _operation_id(method: str, path: str) -> str:
    return "_".join([method, *"".join(c if c.isalnum() else " " for c in path).split()])


def _finish(method: str, path: str, operation: Schema, tag: str) -> None:
    """Tag, name and secure one operation; a secured one gains the answers every secured call can give."""
    operation["tags"] = [tag]
    operation["operationId"] = _operation_id(method, path)
    if "requestBody" in operation:
        operation["responses"].setdefault("413", error("The body is larger than -max-admin-body-size."))
    if (method, path) in OPEN_OPERATIONS:
        operation["security"] = []
        return
    operation["security"] = [{"bearer": []}]
    responses = operation["responses"]
    for status, message in COMMON_ERRORS:
        responses.setdefault(status, error(message))
    operation["responses"] = dict(sorted(responses.items()))


def openapi_document() -> dict[str, Any]:
    """The whole admin API as an OpenAPI 3.1 document (a new dict on every call)."""
    paths: dict[str, Schema] = {}
    for tag, group in _groups():
        for path, operations in group.items():
            for method, operation in operations.items():
                _finish(method, path, operation, tag)
            paths[path] = operations
    bearer = "A token from `POST /api/token-auth`; checked only when the server was started with `-auth`."
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "simproxy admin API",
            "version": VERSION,
            "description": DESCRIPTION,
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "tags": [{"name": name, "description": text} for name, text in TAGS],
        "paths": paths,
        "components": {
            "schemas": _schemas(),
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": bearer}
            },
        },
    }


async def get_openapi(request: Request) -> HTTPResponse:
    """``GET /api/v2/openapi.json``: the document above."""
    return json_response(openapi_document())
