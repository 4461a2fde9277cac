"""The HTTP service and the CLI, driven from outside: a real uvicorn over HTTP, the CLI run."""
