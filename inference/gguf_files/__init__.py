"""GGUF model files (llama.cpp's format): configuration, tokenizer and weights from one file.

The `gguf` package reads the file and dequantizes its tensors; this package maps what it reads onto
codedraft's architectures and tokenizer.
"""
