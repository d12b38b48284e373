from tests.api.conftest import gateway, http, request_log  # noqa: F401  (the loopback gateway and client fixtures)
