"""Next-edit prompts, the daemon's side: one renderer per published next-edit format (Sweep's
next-edit model, Zed's Zeta) and the model's chat template with an instruction for any other
instruct model; each also parses its model's reply back into the rewritten region."""
