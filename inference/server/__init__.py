"""The gRPC inference daemon: serves the engine as ``codedraft.v1.Inference``.

Modules, from the wire inward:
  address        ``unix:PATH`` / ``tcp:HOST:PORT`` (no torch, no grpc: shared with the client)
  listen         private unix sockets, one daemon per socket, no TCP off loopback without TLS and a token
  bearer_token   the token check of every face (grpc_auth: its gRPC interceptor)
  grpc_server    the gRPC listener's lifecycle: bind, health while loading, serve, drain on SIGTERM
  servicer       the gRPC face: RPC handlers over the request runner, failures as status codes
  request_runner one request from its proto message to its chunks, for the gRPC and HTTP faces
  validation, prepare, prompt_budget
                 request checks, proto to engine settings, the truncation policy
  live_requests  Cancel lookup and cancel-previous per session
  counters       GetStats totals and per-request figures

The model being served, behind the `InferenceBackend` protocol, lives in ``inference/backends``.

Importing this package imports nothing heavy; `grpc_server` and the engine-facing modules pull in torch.
"""
