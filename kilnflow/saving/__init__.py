"""State on disk: safetensors weights and JSON object graphs (checkpoints). Never pickle."""
