"""Adapters from providers to the :class:`~pytest_karenina.llm.ports.RawModel` protocol.

Provider SDKs (LangChain, langchain-openai) are imported only when an adapter
builds its chat model, never when this package is imported.
"""
