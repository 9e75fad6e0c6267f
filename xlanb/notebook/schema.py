"""The report JSON's schema (`report.schema.json`, JSON Schema draft 2020-12) and a check.

`validate(data)` uses `jsonschema` when it is installed.  Without it, a small validator
below checks the subset of the vocabulary the schema uses (type, const, required,
properties, additionalProperties, items, oneOf, $ref to $defs, minimum,
exclusiveMinimum), so the check never silently becomes a no-op.
"""
from __future__ import annotations

import functools
import json
from importlib import resources

SCHEMA_FILE = "report.schema.json"


@functools.lru_cache(maxsize=1)
def load_schema() -> dict:
    text = resources.files(__package__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    return json.loads(text)


def validate(data: dict) -> None:
    """Raise ValueError naming the first place where `data` breaks the schema."""
    schema = load_schema()
    try:
        import jsonschema
    except ImportError:
        errors = check(data, schema, schema, "$")
        if errors:
            raise ValueError(f"report does not match {SCHEMA_FILE}: {errors[0]}") from None
        return
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        where = "$" + "".join(f"[{p!r}]" for p in error.absolute_path)
        raise ValueError(f"report does not match {SCHEMA_FILE}: at {where}: "
                         f"{error.message}")


_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is_type(value, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def check(value, schema: dict, root: dict, path: str) -> list[str]:
    """Errors of `value` against `schema` (the subset named in the module docstring)."""
    if "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/$defs/"):
            return [f"{path}: unsupported $ref {ref}"]
        return check(value, root["$defs"][ref.split("/")[-1]], root, path)
    if "const" in schema and value != schema["const"]:
        return [f"{path}: expected {schema['const']!r}, got {value!r}"]
    if "oneOf" in schema:
        matches = [s for s in schema["oneOf"] if not check(value, s, root, path)]
        if len(matches) != 1:
            return [f"{path}: matches {len(matches)} of the oneOf alternatives, not 1"]
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(value, n) for n in names):
            return [f"{path}: expected {' or '.join(names)}, got {type(value).__name__}"]
    errors: list[str] = []
    if _is_type(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path}: {value} < minimum {schema['minimum']}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            errors.append(f"{path}: {value} <= exclusiveMinimum {schema['exclusiveMinimum']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: missing required {key!r}")
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in properties:
                errors += check(item, properties[key], root, f"{path}[{key!r}]")
            elif extra is False:
                errors.append(f"{path}: unexpected {key!r}")
            elif isinstance(extra, dict):
                errors += check(item, extra, root, f"{path}[{key!r}]")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors += check(item, schema["items"], root, f"{path}[{i}]")
    return errors
