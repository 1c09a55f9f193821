"""HTTP faces of the daemon: the OpenAI API (``/v1/models``, ``/v1/completions``, ``/v1/chat/completions``)
and llama.cpp's ``/infill``, for tools that do not speak codedraft's gRPC.

  call_bridge       runs one face request through the gRPC servicer's own handlers (same checks, prompt
                    building, cancel-previous, counters and KV reuse as a gRPC call)
  openai_requests   JSON bodies of the OpenAI API and of /infill to codedraft's proto requests
  openai_replies    codedraft's chunks to OpenAI and llama.cpp JSON and SSE events
  face              the aiohttp application: routes, bearer token, TLS, start and stop
"""
