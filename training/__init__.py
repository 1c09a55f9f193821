"""The reproducible recipe that trains the embedded default model pair (`models/codedraft-*`).

A dev tool: it trains with transformers' ``LlamaForCausalLM`` so it does not depend on the project engine,
and writes the Hugging Face layout the engine loads.
"""
