"""HTTP faces of the daemon: the OpenAI API (``/v1/models``, ``/v1/completions``, ``/v1/chat/completions``)
and llama.cpp's ``/infill``, for tools that do not speak codedraft's gRPC.

  openai_requests   JSON bodies of the OpenAI API and of /infill to codedraft's proto requests
  openai_replies    codedraft's chunks to OpenAI and llama.cpp JSON and SSE events
  face              the aiohttp application over the request runner (``inference/server/request_runner.py``,
                    which the gRPC face uses too): routes, bearer token, TLS, server-sent events
"""
