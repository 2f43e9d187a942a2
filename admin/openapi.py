"""The OpenAPI 3.1 description of the whole admin API, served by ``GET /api/v2/openapi.json``.

``openapi_document()`` builds a new dict on every call from the small helpers below; nothing is
cached and nothing at module level is mutable. Every configuration route is described under both
namespaces (``/api/v2/service/...`` and ``/api/v2/hoverfly/...``) with the same operation.
tests/admin/test_openapi.py checks that the (method, path) pairs listed here are exactly the routes
admin/api.py registers with ``-enable-middleware-api``, so a new route without a description fails.

Response schemas follow the handlers' real answers but stay open (``additionalProperties`` allowed),
so a client generated from them keeps working when a field is added.
"""

from __future__ import annotations

from typing import Any

from sanic import Request
from sanic.response import HTTPResponse

from admin.responses import json_response
from engine.config import MODES
from engine.version import VERSION

Schema = dict[str, Any]

NAMESPACES = ("service", "hoverfly")
"""The two prefixes of the configuration routes (as in admin.api, which imports this module)."""
OPEN_OPERATIONS = frozenset({("get", "/api/health"), ("post", "/api/token-auth"), ("options", "/api/token-auth")})
"""Operations that never need a token, even with ``-auth``."""
COUNTERS = ("capture", "diff", "modify", "simulate", "spy", "synthesize")
JSON = "application/json"
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
)
COMMON_ERRORS = (
    ("401", "With `-auth`: the bearer token is missing, invalid, expired or logged out."),
    ("500", "An internal error, or the store answered with an error."),
    ("503", "The store (Redis) cannot be reached."),
)
"""Answers any secured operation can give: the token check itself reads the store."""
MALFORMED = "The body is not a JSON object of the expected shape (`Malformed JSON`)."
WHEN = "Epoch seconds or ISO 8601."


# -- schema helpers ------------------------------------------------------------------------------------


def _ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def _typed(kind: str, description: str = "", **extra: Any) -> Schema:
    out: Schema = {"type": kind, **extra}
    if description:
        out["description"] = description
    return out


def _string(description: str = "", **extra: Any) -> Schema:
    return _typed("string", description, **extra)


def _integer(description: str = "") -> Schema:
    return _typed("integer", description)


def _boolean(description: str = "") -> Schema:
    return _typed("boolean", description)


def _array(items: Schema, description: str = "") -> Schema:
    return _typed("array", description, items=items)


def _strings(names: str) -> Schema:
    """String properties, one per space-separated name."""
    return {name: _string() for name in names.split()}


def _object(properties: Schema, required: str = "", description: str = "") -> Schema:
    """An object with these properties (others allowed); ``required``: names, space-separated, or ``*`` for all."""
    out = _typed("object", description, properties=properties, additionalProperties=True)
    names = list(properties) if required == "*" else required.split()
    if names:
        out["required"] = names
    return out


def _nullable(schema: Schema, description: str) -> Schema:
    return {"anyOf": [{"type": "null"}, schema], "description": description}


def _map_of(values: Schema, description: str = "") -> Schema:
    return _typed("object", description, additionalProperties=values)


def _list_map() -> Schema:
    """A Go ``map[string][]string`` (headers, form fields)."""
    return _map_of(_array(_string()))


# -- operation helpers ------------------------------------------------------------------------------


def _ok(description: str, schema: Schema | None = None, media: str = JSON) -> Schema:
    """A 200: ``schema`` under ``media``, or (no schema) an empty ``text/plain`` body."""
    if schema is None:
        return {"description": description, "content": {"text/plain": {"schema": _string("Empty.", maxLength=0)}}}
    return {"description": description, "content": {media: {"schema": schema}}}


def _text(description: str, media: str) -> Schema:
    return _ok(description, _string(), media)


def _error(description: str) -> Schema:
    return {"description": description, "content": {JSON: {"schema": _ref("Error")}}}


def _body(schema: Schema, description: str, *, required: bool = True, media: tuple[str, ...] = (JSON,)) -> Schema:
    return {"description": description, "required": required, "content": {m: {"schema": schema} for m in media}}


def _path_param(name: str, description: str) -> Schema:
    return {"name": name, "in": "path", "required": True, "description": description, "schema": _string()}


def _query(name: str, description: str, schema: Schema | None = None) -> Schema:
    return {"name": name, "in": "query", "required": False, "description": description, "schema": schema or _string()}


def _op(
    summary: str,
    ok: Schema,
    errors: dict[int, str] | None = None,
    *,
    body: Schema | None = None,
    params: tuple[Schema, ...] = (),
    description: str = "",
) -> Schema:
    """One operation; tags, the operationId, security and the common error answers are added later."""
    out: Schema = {"summary": summary}
    if description:
        out["description"] = description
    if params:
        out["parameters"] = list(params)
    if body is not None:
        out["requestBody"] = body
    out["responses"] = {"200": ok} | {str(status): _error(text) for status, text in sorted((errors or {}).items())}
    return out


# -- component schemas -----------------------------------------------------------------------------------


def _journal_entry() -> Schema:
    request = {**_strings("path method destination scheme"), "query": _string("The query string, parameters sorted.")}
    request |= {"formData": _list_map(), "body": _string(), "headers": _list_map()}
    response = {"status": _integer(), "body": _string("Base64 when `encodedBody` is true."), "encodedBody": _boolean()}
    action = _strings("name invoked completed correlationId") | {"status": _integer()}
    entry = {
        "request": _object(request, "path method destination scheme query body headers"),
        "response": _object(response | {"headers": _list_map()}, "status body encodedBody"),
        "mode": _string(),
        "timeStarted": _string("When the request arrived (RFC 3339, milliseconds)."),
        "latency": _typed("number", "Milliseconds from request to response."),
        "id": _string(),
        "postServeAction": _nullable(_object(action, "name invoked completed"), "The post-serve action that ran."),
    }
    return _object(entry, "request response mode timeStarted latency id")


def _cache_entry() -> Schema:
    any_object = {"type": "object"}
    closest = _object({"response": any_object, "requestMatcher": any_object, "missedFields": _array(_string())}, "*")
    entry = {
        "key": _string("The md5 key of the request's cacheable fields."),
        "matchingPair": _typed("object", "The pair that answered (hits only)."),
        "headerMatch": _boolean(),
        "closestMiss": _nullable(closest, "The closest pair of a miss."),
    }
    return _object(entry, "key headerMatch closestMiss")


def _diff_group() -> Schema:
    entry = _object(_strings("field expected actual"), "*")
    report = _object({"timestamp": _string("ISO 8601, UTC."), "diffEntries": _array(entry)}, "*")
    return _object({"request": _object(_strings("method host path query"), "*"), "diffReports": _array(report)}, "*")


def _config_schemas() -> Schema:
    mode = _string(enum=list(MODES))
    arguments = {
        "headersWhitelist": _array(_string(), "Headers captured (capture, spy) or compared (diff); `*` for all."),
        "matchingStrategy": _string("`strongest` (default) or `first` (simulate, spy)."),
        "stateful": _boolean("Capture repeated requests as a sequence of states."),
        "overwriteDuplicate": _boolean("Capture replaces an existing pair for the same request."),
        "captureOnMiss": _boolean("Spy: record the real answer of a request no pair matched."),
        "captureDelay": _boolean("Capture records the real service's latency as a delay."),
    }
    cors = _strings("allowOrigin allowMethods allowHeaders") | {"preflightMaxAge": _integer()}
    config = {"cors": _ref("Cors"), "destination": _string(), "middleware": _ref("Middleware"), "mode": mode}
    config |= {"arguments": _ref("ModeArguments"), "isWebServer": _boolean(), "usage": _ref("Usage")}
    action = _strings("actionName binary script remote") | {"delayInMs": _integer("Wait after the response (ms).")}
    return {
        "Counters": _object({name: _integer() for name in COUNTERS}, "*", "Requests answered per mode, fleet-wide."),
        "Usage": _object({"counters": _ref("Counters")}, "*"),
        "ModeArguments": _object(arguments, description="Only the arguments the current mode uses are shown."),
        "Mode": _object({"mode": mode, "arguments": _ref("ModeArguments")}, "*"),
        "Middleware": _object(_strings("binary script remote"), description="A program and script, or a URL."),
        "Cors": _object({"enabled": _boolean(), **cors, "allowCredentials": _boolean()}, "enabled"),
        "ServiceConfig": _object(config | _strings("version upstreamProxy"), "*"),
        "PostServeAction": _object(action, description="`actionName` is left out for the fallback action."),
        "PostServeActions": _object(
            {"actions": _array(_ref("PostServeAction"), "By name, the fallback last.")}, description="`{}` when none."
        ),
        "CsvDataSources": _object(
            {"csvDataSources": _array(_object({"name": _string(), "data": _string("CSV text.")}, "*"))}, "*"
        ),
    }


def _schemas() -> Schema:
    meta = _object(_strings("schemaVersion serviceVersion timeExported"), "schemaVersion")
    data = _object({"pairs": _array({"type": "object"}), "globalActions": {"type": "object"}})
    upload_meta = _object({"schemaVersion": _string("`v1` to `v5.3`.")}, "*")
    schema_hint = "`GET /api/v2/simulation/schema` gives the full JSON Schema (v5)."
    index = {"name": _string(), "entries": _array(_object({"key": _string(), "journalEntryId": _string()}, "*"))}
    page = {"journal": _array(_ref("JournalEntry")), "indexes": _array(_ref("JournalIndex"))}
    page |= {"offset": _integer(), "limit": _integer(), "total": _integer("Entries found, before paging.")}
    return {
        "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
        "Simulation": _object({"data": data, "meta": meta}, "*", f"A simulation document. {schema_hint}"),
        "SimulationUpload": _object(
            {"data": {"type": "object"}, "meta": upload_meta}, "meta", f"A simulation, format v1 to v5.3. {schema_hint}"
        ),
        "ImportWarnings": _object(
            {"warnings": _array(_object({"message": _string()}, "*"))}, "*", "Answered when some pairs were skipped."
        ),
        "JournalEntry": _journal_entry(),
        "JournalIndex": _object(index, "name", "`entries` is left out when the index is empty."),
        "JournalPage": _object(page, "*"),
        "DiffList": _object({"diff": _array(_diff_group())}, "*"),
        "CacheList": _object({"cache": _array(_cache_entry())}, "*"),
        "State": _object({"state": _map_of(_string(), "State keys and their values.")}, "*"),
        **_config_schemas(),
    }


# -- paths -----------------------------------------------------------------------------------------------


def _general_paths() -> dict[str, Schema]:
    token = _ok("A bearer token (without `-auth`, a fixed dummy token).", _object({"token": _string("A JWT.")}, "*"))
    credentials = _object(_strings("username password"))
    user = _object({"uuid": _string(), "username": _string(), "is_admin": _boolean()}, "*")
    login_errors = {401: "Wrong credentials.", 429: "Three failed logins: logins are locked for 10 minutes."}
    allow = {"description": "Empty; the `Allow` header lists the methods.", "headers": {"Allow": {"schema": _string()}}}
    document = _object({"openapi": _string(), "info": {"type": "object"}, "paths": {"type": "object"}}, "*")
    return {
        "/api/health": {"get": _op("Health check", _ok("Healthy.", _object({"message": _string()}, "*")))},
        "/api/token-auth": {
            "post": _op(
                "Log in and get a token",
                token,
                login_errors | {int(status): text for status, text in COMMON_ERRORS if status != "401"},
                body=_body(credentials, "The credentials; an unreadable body counts as empty ones.", required=False),
            ),
            "options": {"summary": "The methods allowed on the login", "responses": {"200": allow}},
        },
        "/api/refresh-token-auth": {"get": _op("Get a new token for the caller", token)},
        "/api/logout": {"get": _op("Log out", _ok("The caller's token is refused from now on, everywhere."))},
        "/api/users": {"get": _op("List the users", _ok("No passwords.", _object({"users": _array(user)}, "*")))},
        "/metrics": {"get": _op("Prometheus metrics of this instance", _text("Prometheus text format.", "text/plain"))},
        "/api/v2/shutdown": {"delete": _op("Stop the process", _ok("Answered first; then every worker exits."))},
        "/api/v2/openapi.json": {"get": _op("This OpenAPI document", _ok("An OpenAPI 3.1 document.", document))},
    }


def _simulation_paths() -> dict[str, Schema]:
    imported = _ok(
        "The new simulation, or the warnings when some pairs were skipped.",
        {"anyOf": [_ref("Simulation"), _ref("ImportWarnings")]},
    )
    upload = _body(_ref("SimulationUpload"), "A simulation (v1 to v5.3); it is validated and upgraded to v5.")
    errors = {
        400: "Invalid JSON, an unsupported schema version, or a simulation that fails validation or compilation.",
        500: "A pair names a post-serve action that does not exist, or the store failed.",
    }
    url_pattern = _query("urlPattern", "A Go regex on each pair's exact destination + path: only matches are kept.")
    duplicates = "A pair whose request equals an existing pair's is skipped with a warning."
    return {
        "/api/v2/simulation": {
            "get": _op(
                "Export the simulation",
                _ok("The simulation, always in the v5.3 format.", _ref("Simulation")),
                {500: "`urlPattern` is not a valid regex, or the store failed."},
                params=(url_pattern,),
            ),
            "put": _op("Replace the simulation", imported, errors, body=upload),
            "post": _op("Append to the simulation", imported, errors, body=upload, description=duplicates),
            "delete": _op("Clear the simulation", _ok("The empty simulation.", _ref("Simulation"))),
        },
        "/api/v2/simulation/schema": {
            "get": _op("The simulation's JSON Schema", _ok("A JSON Schema (v5 format).", {"type": "object"}))
        },
    }


def _journal_paths() -> dict[str, Schema]:
    page = _ok("A page of journal entries.", _ref("JournalPage"))
    indexes = _ok("Every journal index.", _array(_ref("JournalIndex")))
    disabled = {500: "The journal is disabled (`-journal-size 0`), or the store failed."}
    search = _object({"request": _typed("object", "Request matchers, as in a pair's `request`.")}, "*")
    index = _body(_object({"name": _string("For example `Request.QueryParam.id`.")}, "name"), "The index.")
    paging = (
        _query("limit", "Entries per page (default 500).", _integer()),
        _query("offset", "Entries skipped (default 0).", _integer()),
        _query("from", f"Only entries started at or after this time. {WHEN}"),
        _query("to", f"Only entries started at or before this time. {WHEN}"),
        _query("sort", "`timestarted` or `latency`, optionally followed by `:asc` or `:desc`."),
    )
    return {
        "/api/v2/journal": {
            "get": _op("Read the journal", page, {400: "A bad `sort`."} | disabled, params=paging),
            "post": _op(
                "Search the journal",
                page,
                {400: "No `request`, or an invalid matcher."} | disabled,
                body=_body(search, "The matchers the entries must pass."),
            ),
            "delete": _op("Empty the journal and drop its indexes", page, disabled),
        },
        "/api/v2/journal/index": {
            "get": _op("List the journal indexes", indexes, disabled),
            "post": _op(
                "Add a journal index", indexes, {400: "The index exists, or is not valid."} | disabled, body=index
            ),
        },
        "/api/v2/journal/index/{name}": {
            "delete": _op(
                "Drop a journal index",
                indexes,
                {404: "No index by that name."} | disabled,
                params=(_path_param("name", "The index's name."),),
            )
        },
    }


def _record_paths() -> dict[str, Schema]:
    record = _object(_strings("level msg time"), "*", "A log record; other keys are its fields.")
    logs = _ok("The newest records; with `Accept: text/plain`, text lines.", _object({"logs": _array(record)}, "*"))
    logs["content"]["text/plain"] = {"schema": _string()}
    logs_params = (
        _query("limit", "The newest records returned (default 500).", _integer()),
        _query("from", f"Only records after this time. {WHEN}"),
    )
    diff = _ok("The diff reports, grouped per request.", _ref("DiffList"))
    diff_filter = _object({"excludedHeaders": _array(_string()), "excludedResponseFields": _array(_string())})
    no_cache = {500: "The cache is disabled (`-disable-cache`: `No cache set`), or the store failed."}
    state = _ok("The whole state.", _ref("State"))
    patch = _body(_object({"state": _map_of(_string())}), "The keys to set; the others are kept.")
    replace = _body(_ref("State"), "The new state.")
    return {
        "/api/v2/logs": {
            "get": _op(
                "Read the log records", logs, {500: "The logs are disabled (`-logs-size 0`)."}, params=logs_params
            )
        },
        "/api/v2/diff": {
            "get": _op("Read the diff reports", diff),
            "post": _op(
                "Read the diff reports without some entries",
                diff,
                {400: "The body is empty or not a filter object."},
                body=_body(diff_filter, "Response headers and JSON paths (`$.a.b`) to leave out."),
            ),
            "delete": _op("Delete the diff reports", _ok("Deleted.")),
        },
        "/api/v2/cache": {
            "get": _op("Read the match cache", _ok("Every cached entry.", _ref("CacheList")), no_cache),
            "delete": _op("Empty the match cache", _ok('`{"cache": []}`.', _ref("CacheList")), no_cache),
        },
        "/api/v2/state": {
            "get": _op("Read the state", state),
            "put": _op("Replace the state", state, {400: "No `state`, or a non-string value."}, body=replace),
            "patch": _op("Set some state keys", state, {400: "Not JSON, or a value that is not a string."}, body=patch),
            "delete": _op("Empty the state", _ok("Emptied.")),
        },
    }


def _config_paths(base: str) -> dict[str, Schema]:
    middleware = _ok("The middleware (empty strings when none).", _ref("Middleware"))
    actions = _ok("Every post-serve action.", _ref("PostServeActions"))
    csv = _ok("Every CSV data source.", _ref("CsvDataSources"))
    pac = _text("The PAC file.", PAC)
    destination = _object({"destination": _string("A Go (RE2) regex on the request's host and path.")}, "*")
    usage = _object({"metrics": _ref("Usage"), "usage": _ref("Usage")}, "*", "The same counters under both keys.")
    version = _object({"version": _string()}, "*")
    upstream = _object({"upstreamProxy": _string("Empty when none.")}, "*")
    mode = _body(_object({"mode": _string(enum=list(MODES)), "arguments": _ref("ModeArguments")}, "mode"), "A mode.")
    set_middleware = "Exists only with `-enable-middleware-api` (else 404). The middleware is first run on a sample."
    action = _body(_ref("PostServeAction"), "A local (binary, script) or remote action; a blank name: the fallback.")
    pac_body = _body(_string(), "The PAC file; an empty body unsets it.", required=False, media=(PAC, "text/plain"))
    source = _body(_object({"name": _string(), "data": _string("CSV text.")}), "The source's name and CSV text.")
    return {
        base: {"get": _op("Read the configuration", _ok("The whole configuration.", _ref("ServiceConfig")))},
        f"{base}/mode": {
            "get": _op("Read the mode", _ok("The mode and its arguments.", _ref("Mode"))),
            "put": _op(
                "Change the mode",
                _ok("The new mode and its arguments.", _ref("Mode")),
                {400: "An unknown mode, a bad argument, or a mode refused with `-webserver`."},
                body=mode,
            ),
        },
        f"{base}/destination": {
            "get": _op("Read the destination", _ok("The destination regex.", destination)),
            "put": _op(
                "Change the destination",
                _ok("The new destination.", destination),
                {400: MALFORMED, 422: "The destination is not a valid regular expression."},
                body=_body(destination, "The new destination."),
            ),
        },
        f"{base}/usage": {"get": _op("Read the usage counters", _ok("Requests per mode, fleet-wide.", usage))},
        f"{base}/version": {"get": _op("Read the version", _ok("The version.", version))},
        f"{base}/upstream-proxy": {"get": _op("Read the upstream proxy", _ok("The upstream proxy.", upstream))},
        f"{base}/cors": {"get": _op("Read the CORS settings", _ok("The CORS settings.", _ref("Cors")))},
        f"{base}/middleware": {
            "get": _op("Read the middleware", middleware),
            "put": _op(
                "Change the middleware",
                middleware,
                {
                    400: MALFORMED,
                    404: "Started without `-enable-middleware-api`.",
                    422: "No binary, or the trial failed.",
                },
                body=_body(_ref("Middleware"), "The new middleware; all three empty removes it."),
                description=set_middleware,
            ),
        },
        f"{base}/ca-cert": {
            "get": _op(
                "Download the CA certificate", _text("The CA (PEM) to trust for HTTPS.", "application/x-pem-file")
            )
        },
        f"{base}/post-serve-action": {
            "get": _op("List the post-serve actions", actions),
            "put": _op(
                "Set a post-serve action", actions, {400: f"{MALFORMED} Or `remote host is invalid`."}, body=action
            ),
        },
        f"{base}/post-serve-action/{{name}}": {
            "delete": _op(
                "Delete a post-serve action",
                actions,
                {400: "No action by that name (`invalid action name passed`)."},
                params=(_path_param("name", "The action's name."),),
            )
        },
        f"{base}/pac": {
            "get": _op("Read the PAC file", pac, {404: "No PAC file is set (`Not found`)."}),
            "put": _op("Set the PAC file", pac, {404: "The body was empty: no PAC file is set now."}, body=pac_body),
            "delete": _op("Unset the PAC file", _ok("Unset.")),
        },
        f"{base}/templating-data-source/csv": {
            "get": _op("List the CSV data sources", csv),
            "put": _op("Set a CSV data source", csv, {400: f"{MALFORMED} Or CSV that does not parse."}, body=source),
        },
        f"{base}/templating-data-source/csv/{{name}}": {
            "delete": _op(
                "Delete a CSV data source",
                csv,
                {404: "No data source by that name."},
                params=(_path_param("name", "The source's name."),),
            )
        },
    }


# -- the document --------------------------------------------------------------------------------


def _live_paths(base: str) -> dict[str, Schema]:
    """What the fleet does now (admin/live.py): Hoverfly's API has no view of it; the dashboard reads it."""
    series = _object(
        {"mode": _string(), "outcome": _string("hit, miss, forwarded or error."), "requests": _array(_integer())},
        "*",
    )
    traffic = _object(
        {"start": _integer("First second (epoch)."), "end": _integer("Last second."), "series": _array(series)}, "*"
    )
    worker = _object({"id": _string(), "pid": _nullable(_integer(), "Its process id."), "lastSeen": _string()}, "*")
    workers = _object(
        {"instances": _array(_object({"id": _string(), "workers": _array(worker)}, "*")), "workers": _integer()}, "*"
    )
    seconds = _query("seconds", "How many seconds back, 1 to 900 (default 60).", _integer())
    return {
        f"{base}/traffic": {
            "get": _op(
                "Read the fleet's requests per second",
                _ok("Requests per second by mode and outcome, one number a second, oldest first.", traffic),
                {400: "`seconds` is not a whole number from 1 to 900."},
                params=(seconds,),
            )
        },
        f"{base}/workers": {"get": _op("List the live workers", _ok("Live workers by instance.", workers))},
    }


def _groups() -> list[tuple[str, dict[str, Schema]]]:
    config: dict[str, Schema] = {}
    live: dict[str, Schema] = {}
    for ns in NAMESPACES:
        config |= _config_paths(f"/api/v2/{ns}")
        live |= _live_paths(f"/api/v2/{ns}")
    return [
        ("general", _general_paths()),
        ("simulation", _simulation_paths()),
        ("journal", _journal_paths()),
        ("records", _record_paths()),
        ("configuration", config),
        ("fleet", live),
    ]


def _operation_id(method: str, path: str) -> str:
    return "_".join([method, *"".join(c if c.isalnum() else " " for c in path).split()])


def _finish(method: str, path: str, operation: Schema, tag: str) -> None:
    """Tag, name and secure one operation; a secured one gains the answers every secured call can give."""
    operation["tags"] = [tag]
    operation["operationId"] = _operation_id(method, path)
    if "requestBody" in operation:
        operation["responses"].setdefault("413", _error("The body is larger than -max-admin-body-size."))
    if (method, path) in OPEN_OPERATIONS:
        operation["security"] = []
        return
    operation["security"] = [{"bearer": []}]
    responses = operation["responses"]
    for status, text in COMMON_ERRORS:
        responses.setdefault(status, _error(text))
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
