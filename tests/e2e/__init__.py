"""End-to-end tests: the engine through langchain-openai over real HTTP to the test server."""
