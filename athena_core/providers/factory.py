"""Build the configured LLM and embedder (SPEC S8). Heavy libraries load only when first asked for."""
from __future__ import annotations

from athena_core.providers.embeddings import CachedEmbedder, Embedder
from athena_core.providers.llm import LLMProvider
from athena_core.wiring.settings import Settings


def build_llm(settings: Settings) -> LLMProvider:
    if settings.llm_provider == "openai":
        from athena_core.providers.openai_llm import OpenAILLM

        return OpenAILLM(
            model=settings.llm_model, api_key=settings.openai_api_key, base_url=settings.openai_base_url,
            timeout_s=settings.llm_timeout_s,
        )
    from athena_core.providers.metered_llm import MeteredLLM
    from athena_core.providers.offline_llm import OfflineLLM

    return MeteredLLM(OfflineLLM(topic_nouns=settings.offline_topic_nouns))


def build_embedder(settings: Settings) -> CachedEmbedder:
    inner: Embedder
    if settings.embedding_provider == "openai":
        from athena_core.providers.openai_embedder import OpenAIEmbedder

        inner = OpenAIEmbedder(
            model=settings.embedding_model, api_key=settings.openai_api_key, base_url=settings.openai_base_url,
            dimension=settings.embedding_dimension, timeout_s=settings.llm_timeout_s,
        )
    else:
        from athena_core.providers.local_embedder import LocalEmbedder

        inner = LocalEmbedder(settings.embedding_model, threads=settings.embedding_threads or None,
                              runtime=settings.embedding_runtime, cache_dir=settings.model_cache_dir,
                              query_precision=settings.embedding_query_precision,
                              text_precision=settings.embedding_text_precision)
    return CachedEmbedder(inner, max_entries=settings.embedding_cache_size)


def prepare_embedder(settings: Settings) -> str:
    """Make the local model ready before processes start (its ONNX export, once per machine, ~15 s), so no
    API or worker pays for it on a first request and no two export it at once. Returns what will run."""
    if settings.embedding_provider != "local":
        return settings.embedding_provider
    from athena_core.providers.local_embedder import prepare

    return prepare(settings.embedding_model, settings.embedding_runtime, settings.model_cache_dir,
                   settings.embedding_threads or None, settings.embedding_query_precision,
                   settings.embedding_text_precision)
