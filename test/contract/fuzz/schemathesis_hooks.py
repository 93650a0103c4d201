"""A check for schemathesis (issue 23.5): a request valid by /openapi.json is never refused for a reason the
document could have said. A positive (schema-valid) request answered 400 must carry an error code the operation
lists in `x-rules-not-in-schema` (the rules OpenAPI cannot express, also in its description)."""
import json

import schemathesis
from schemathesis.specs.openapi.checks import is_unexpected_http_status_case


@schemathesis.check
def schema_valid_request_accepted(ctx, response, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or is_unexpected_http_status_case(case):
        return None
    if response.status_code != 400:
        return None
    listed = case.operation.definition.raw.get("x-rules-not-in-schema", [])
    try:
        code = json.loads(response.content)["error"]["code"]
    except Exception:  # noqa: BLE001 - a 400 without our error body is itself a failure
        code = None
    if code not in listed:
        raise AssertionError(
            f"A schema-valid request was refused with {code}, which the operation does not list as a rule "
            f"the schema cannot express ({', '.join(listed) or 'none'})"
        )
    return None
