"""The inference engine: paged KV prefix cache, scheduler, model runner and the step loop."""
