"""Where benchmark tables live: local directories or s3:// URIs on an S3 endpoint.

delta-rs on S3 needs a safe commit primitive. Real S3 and moto (5.x) accept
conditional writes (If-None-Match), which delta-rs uses with
aws_conditional_put=etag; that is the same primitive cdc2delta commits with,
so the comparison is like for like. AWS_S3_ALLOW_UNSAFE_RENAME would skip the
lock entirely and is kept only as a fallback (--s3-commit unsafe-rename).
"""

import os

COMMIT_MODES = ("etag", "unsafe-rename")


def is_s3(uri):
    return uri.startswith("s3://") or uri.startswith("s3a://")


def deltars_uri(uri):
    """uri with the scheme delta-rs expects (s3a:// becomes s3://)."""
    if is_s3(uri):
        return "s3://" + uri.split("://", 1)[1]
    return os.path.abspath(uri)


def endpoint(explicit=None):
    """The S3 endpoint: the explicit one, else CDC2DELTA_S3_ENDPOINT."""
    ep = explicit or os.environ.get("CDC2DELTA_S3_ENDPOINT")
    if not ep:
        raise ValueError("s3:// table but neither --s3-endpoint nor CDC2DELTA_S3_ENDPOINT is set")
    return ep


def options(uri, s3_endpoint=None, commit="etag"):
    """delta-rs storage_options for uri (None for local paths)."""
    if not is_s3(uri):
        return None
    if commit not in COMMIT_MODES:
        raise ValueError(f"unknown S3 commit mode {commit!r}; want one of {COMMIT_MODES}")
    ep = endpoint(s3_endpoint)
    opts = {
        "AWS_ENDPOINT_URL": ep,
        "AWS_ACCESS_KEY_ID": os.environ.get("AWS_ACCESS_KEY_ID", "test"),
        "AWS_SECRET_ACCESS_KEY": os.environ.get("AWS_SECRET_ACCESS_KEY", "test"),
        "AWS_REGION": os.environ.get("AWS_REGION", os.environ.get("AWS_DEFAULT_REGION", "us-east-1")),
        "AWS_ALLOW_HTTP": "true" if ep.startswith("http://") else "false",
        "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "false",
    }
    if commit == "etag":
        opts["conditional_put"] = "etag"
    else:
        opts["AWS_S3_ALLOW_UNSAFE_RENAME"] = "true"
    return opts
