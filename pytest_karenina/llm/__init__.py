"""LLM access: ports, adapters, structured output, transport and record/replay."""
