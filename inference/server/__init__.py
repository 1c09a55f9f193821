"""The gRPC inference daemon: serves the engine as ``codedraft.v1.Inference``.

Modules, from the wire inward:
  address        ``unix:PATH`` / ``tcp:HOST:PORT`` (no torch, no grpc: shared with the client)
  listen, auth   private unix sockets, one daemon per socket, tokens on TCP
  app            lifecycle: bind, health while loading, serve, drain on SIGTERM
  servicer       the RPC handlers and every call's final status
  validation, prepare, prompt_budget
                 request checks, proto to engine settings, the truncation policy
  live_requests  Cancel lookup and cancel-previous per session
  counters       GetStats totals and per-request figures

The model being served, behind the `InferenceBackend` protocol, lives in ``inference/backends``.

Importing this package imports nothing heavy; `app` and the engine-facing modules pull in torch.
"""
