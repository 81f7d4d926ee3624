"""Cross-check Avro binary encoding with fastavro, an implementation independent of goavro.

Usage:
  avro_crosscheck.py write SCHEMA.json DATA.jsonl   one datum per line in, hex of its Avro body per line out
  avro_crosscheck.py read  SCHEMA.json HEX.txt      one hex body per line in, its datum as JSON per line out

Schemaless Avro bodies, as in the Confluent wire format after its 5-byte header
(fastavro.schemaless_writer / schemaless_reader).

Datum JSON conventions (both directions):
  - unions are unwrapped: a value, or null; fastavro picks the branch
  - bytes are {"$bytes": "<lower-case hex>"}
  - decimal logical types are {"$decimal": "<plain decimal text>"}
  - date, time-millis and timestamp-millis logical types are their Avro integers
    (days, ms past midnight, ms since the epoch)
"""

import datetime
import decimal
import io
import json
import sys

import fastavro

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def to_python(v):
    """Turn the JSON conventions into what fastavro's writer takes."""
    if isinstance(v, dict):
        if set(v) == {"$bytes"}:
            return bytes.fromhex(v["$bytes"])
        if set(v) == {"$decimal"}:
            return decimal.Decimal(v["$decimal"])
        return {k: to_python(x) for k, x in v.items()}
    if isinstance(v, list):
        return [to_python(x) for x in v]
    return v


def to_json(v):
    """Turn what fastavro's reader returns into the JSON conventions."""
    if isinstance(v, dict):
        return {k: to_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [to_json(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return {"$bytes": bytes(v).hex()}
    if isinstance(v, decimal.Decimal):
        return {"$decimal": format(v, "f")}
    if isinstance(v, datetime.datetime):
        delta = v - EPOCH
        return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000
    if isinstance(v, datetime.date):
        return (v - EPOCH.date()).days
    if isinstance(v, datetime.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000
    return v


def main(argv):
    if len(argv) != 4 or argv[1] not in ("write", "read"):
        sys.stderr.write(__doc__)
        return 2
    with open(argv[2]) as f:
        schema = fastavro.parse_schema(json.load(f))
    with open(argv[3]) as f:
        lines = [line for line in f.read().splitlines() if line.strip()]
    out = []
    for line in lines:
        if argv[1] == "write":
            buf = io.BytesIO()
            fastavro.schemaless_writer(buf, schema, to_python(json.loads(line)))
            out.append(buf.getvalue().hex())
        else:
            datum = fastavro.schemaless_reader(io.BytesIO(bytes.fromhex(line)), schema)
            out.append(json.dumps(to_json(datum), ensure_ascii=False, sort_keys=True))
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
