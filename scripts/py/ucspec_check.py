"""Check recorded Unity Catalog requests against UC's published API.

Usage:
  ucspec_check.py REQUESTS.jsonl     one recorded exchange per line; prints a
                                     verdict per line, exits 1 if any fails
  ucspec_check.py --operations       lists the operations the SDK defines

The reference is Unity Catalog's official Python SDK (unitycatalog-client),
generated from UC's OpenAPI spec: its API classes give each operation's method,
path template, query parameters, request body model and answer model; its
pydantic models give the fields, their types, the enums (table_type,
data_source_format, column type_name, ...) and which fields are required.
Nothing here comes from cdc2delta's code.

A line of REQUESTS.jsonl is one exchange:
  {"method": "POST", "path": "/api/2.1/unity-catalog/tables", "query": "",
   "content_type": "application/json", "body": "<request body text>",
   "status": 200, "response": "<answer body text>"}

Each request must be an operation of the SDK (method and path, under the API
root /api/2.1/unity-catalog), send only query parameters that operation takes,
and carry a body exactly when it takes one, as application/json. A body must
validate against the operation's model strictly (JSON types as declared, enum
values from the spec, required fields present) and hold no field the model
lacks, at any depth. A 2xx answer with a body must validate the same way
against the operation's answer model (this keeps a fake server honest;
answers the spec leaves untyped are not checked).
"""

import inspect
import json
import re
import sys
import typing
import urllib.parse

import pydantic
import unitycatalog.client.api as uc_api
import unitycatalog.client.models as uc_models

API_ROOT = "/api/2.1/unity-catalog"


class Operation:
    """One API operation of the SDK."""

    def __init__(self, api, name, method, template, query, body, answer):
        self.api = api  # TablesApi
        self.name = name  # create_table
        self.method = method  # POST
        self.template = template  # /tables/{full_name}
        self.query = query  # allowed query parameter names
        self.body = body  # pydantic model class, or None
        self.answer = answer  # pydantic model class, "object", or None
        self.pattern = re.compile(
            "^" + re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template)) + "$"
        )

    def __str__(self):
        body = self.body.__name__ if self.body else "no body"
        return f"{self.api}.{self.name} ({self.method} {self.template}, {body})"


def model_in(annotation):
    """The pydantic model inside Optional[...]/Annotated[...], or None."""
    if inspect.isclass(annotation) and issubclass(annotation, pydantic.BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        m = model_in(arg)
        if m is not None:
            return m
    return None


def operations():
    """Every operation of every API class, read from the SDK's own code."""
    ops = []
    for api_name, cls in inspect.getmembers(uc_api, inspect.isclass):
        if not api_name.endswith("Api"):
            continue
        for attr in sorted(vars(cls)):
            m = re.fullmatch(r"_(\w+)_serialize", attr)
            if not m:
                continue
            name = m.group(1)
            ser = inspect.getsource(getattr(cls, attr))
            public = inspect.unwrap(getattr(cls, name))
            method = re.search(r"method='(\w+)'", ser).group(1)
            template = re.search(r"resource_path='([^']+)'", ser).group(1)
            query = set(re.findall(r"_query_params\.append\(\(\s*'(\w+)'", ser))
            body = None
            b = re.search(r"_body_params = (\w+)", ser)
            if b:
                body = model_in(inspect.signature(public).parameters[b.group(1)].annotation)
                if body is None:
                    raise SystemExit(f"{api_name}.{name}: body parameter {b.group(1)} has no model")
            answer = None
            a = re.search(r"'200': \"(\w+)\"", inspect.getsource(public))
            if a:
                answer = "object" if a.group(1) == "object" else getattr(uc_models, a.group(1))
            ops.append(Operation(api_name, name, method, template, query, body, answer))
    if not ops:
        raise SystemExit("no operations found in unitycatalog.client.api")
    return ops


def unknown_fields(annotation, value, where):
    """Names in value that the model(s) of annotation do not declare."""
    out = []
    model = annotation if inspect.isclass(annotation) and issubclass(annotation, pydantic.BaseModel) else None
    if model is not None:
        if not isinstance(value, dict):
            return out  # pydantic reports the type
        fields = {(f.alias or n): f for n, f in model.model_fields.items()}
        for k, v in value.items():
            if k not in fields:
                out.append(f"{where}.{k}: not a field of {model.__name__}")
            else:
                out += unknown_fields(fields[k].annotation, v, f"{where}.{k}")
        return out
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (list, typing.List) and isinstance(value, list):
        for i, item in enumerate(value):
            out += unknown_fields(args[0], item, f"{where}[{i}]")
    elif origin in (dict, typing.Dict) and isinstance(value, dict):
        for k, item in value.items():
            out += unknown_fields(args[1], item, f"{where}.{k}")
    elif args:  # Optional, Union, Annotated
        for arg in args:
            if arg is not type(None):
                out += unknown_fields(arg, value, where)
    return out


def validate(model, text, what):
    """Problems of text as a JSON document of model (strict, no extra fields)."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        return [f"{what} is not JSON: {e}"]
    if not isinstance(doc, dict):
        return [f"{what} is not a JSON object"]
    problems = [f"{what}: {p}" for p in unknown_fields(model, doc, "$")]
    try:
        model.model_validate_json(text, strict=True)
        model.from_json(text)  # the SDK's own deserializer
    except pydantic.ValidationError as e:
        for err in e.errors():
            loc = ".".join(str(p) for p in err["loc"])
            got = "" if err["type"] == "missing" else f" (got {repr(err.get('input'))[:120]})"
            problems.append(f"{what} $.{loc}: {err['msg']}{got}")
    return problems


def check(rec, ops):
    """The operation rec is and its problems (an empty list: it conforms)."""
    method, path = rec["method"], rec["path"]
    if not path.startswith(API_ROOT + "/"):
        return None, [f"path {path} is not under the API root {API_ROOT}"]
    rel = path[len(API_ROOT):]
    matches = [op for op in ops if op.pattern.match(rel)]
    if not matches:
        return None, [f"no operation of the API has the path {rel}"]
    op = next((o for o in matches if o.method == method), None)
    if op is None:
        allowed = ", ".join(sorted(f"{o.method} ({o.api}.{o.name})" for o in matches))
        return None, [f"{method} is not an operation on {rel}; the API has {allowed}"]
    problems = []
    for k, v in op.pattern.match(rel).groupdict().items():
        if not urllib.parse.unquote(v):
            problems.append(f"path parameter {k} is empty")
    for k in urllib.parse.parse_qs(rec.get("query") or "", keep_blank_values=True):
        if k not in op.query:
            problems.append(f"query parameter {k} is not one {op.name} takes ({sorted(op.query) or 'none'})")
    body = rec.get("body") or ""
    if op.body is None and body:
        problems.append(f"{op.name} takes no body, got {body[:80]!r}")
    elif op.body is not None:
        if not body:
            problems.append(f"{op.name} takes a {op.body.__name__} body, got none")
        else:
            ctype = (rec.get("content_type") or "").split(";")[0].strip()
            if ctype != "application/json":
                problems.append(f"body content type is {ctype!r}, not application/json")
            problems += validate(op.body, body, f"{op.body.__name__} body")
    answer = rec.get("response") or ""
    # An answer the spec types as a bare "object" (DELETE) is not checked:
    # the OSS server sends "200 OK" as text there.
    if 200 <= rec.get("status", 0) < 300 and answer.strip() and op.answer not in (None, "object"):
        problems += validate(op.answer, answer, f"{op.answer.__name__} answer")
    return op, problems


def main(argv):
    if argv[1:] == ["--operations"]:
        for op in operations():
            print(op)
        return 0
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    ops = operations()
    ok = failed = 0
    with open(argv[1]) as f:
        for i, line in enumerate(f):
            if not line.strip():
                continue
            rec = json.loads(line)
            op, problems = check(rec, ops)
            head = f"#{i} {rec['method']} {rec['path']}"
            if problems:
                failed += 1
                for p in problems:
                    print(f"FAIL {head}: {p}")
            else:
                ok += 1
                print(f"ok   {head}: {op}")
    print(f"checked {ok + failed} requests against unitycatalog-client: {ok} ok, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
