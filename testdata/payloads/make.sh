#!/bin/sh
# Usage: sh testdata/payloads/make.sh  (from the repository root)
set -eu
O=../shared/pi-oracle
D=testdata/payloads
case_() { # corpus stem leaf provider model [payload options...]
  corpus=$1 stem=$2 leaf=$3 provider=$4 model=$5; shift 5
  file=testdata/$corpus/$stem.jsonl
  [ "$corpus" = payloads ] && file=$D/sessions/$stem.jsonl
  arg=; [ "$leaf" != default ] && arg=$leaf
  case $leaf in line*) arg="line:${leaf#line}";; esac
  node $O/payload.mjs "$file" $arg --model "$model" --line-ids "$@" > "$D/${corpus}__${stem}__${leaf}__${provider}.json"
  node $O/context.mjs "$file" $arg --line-ids > "$D/${corpus}__${stem}__${leaf}__context.json"
}
python3 $D/sessions/make-edge-cases.py > $D/sessions/edge-cases.jsonl

case_ pi-1.6.0 02-tool-use default openai ollama/qwen2.5-coder:7b
case_ pi-1.6.0 03-tree-branches 21e45ceb anthropic anthropic/claude-sonnet-4-5
case_ pi-1.6.0 04-branch-summary de876389 openai ollama/qwen2.5-coder:7b
case_ pi-1.6.0 06-model-thinking default openai ollama/gpt-oss:20b
case_ pi-1.6.0 06-model-thinking e41f1b9e openai ollama/gpt-oss:20b
case_ pi-1.6.0 06-model-thinking e41f1b9e anthropic anthropic/claude-opus-4-5
case_ pi-1.6.0 09-auto-compaction default anthropic anthropic/claude-sonnet-4-5
case_ pi-1.6.0 09-auto-compaction 1b18abe2 openai ollama/qwen2.5-coder:7b
case_ pi-1.6.0 10-extension-entries default openai ollama/qwen2.5-coder:7b
case_ pi-1.6.0 11-bash-and-images default openai ollama/qwen2.5-coder:7b
case_ pi-1.6.0 11-bash-and-images 8669ec3f openai cerebras/qwen-3.8-27b
case_ pi-1.6.0 11-bash-and-images 8669ec3f anthropic anthropic/claude-sonnet-4-5
case_ pi-1.6.0 16-errors-and-aborts default openai ollama/qwen2.5-coder:7b
case_ pi-1.6.0 16-errors-and-aborts 1dc8514c openai ollama/qwen2.5-coder:7b
case_ pi-1.6.0 16-errors-and-aborts 1dc8514c anthropic anthropic/claude-sonnet-4-5
case_ pi-1.6.0 16-errors-and-aborts 8bf5ae10 anthropic anthropic/claude-sonnet-4-5
case_ pi-1.6.0 17-steering-queue default openai ollama/qwen2.5-coder:7b
case_ pi-1.6.0 18-system-prompt-updates default openai ollama/qwen2.5-coder:7b
case_ pi-1.6.0 18-system-prompt-updates default anthropic anthropic/claude-fable-5-1
case_ pi-1.6.0 18-system-prompt-updates 223d815e openai ollama/qwen2.5-coder:7b
case_ pi-1.6.0 18-system-prompt-updates 223d815e anthropic anthropic/claude-opus-5 --thinking medium
case_ pi-1.6.0 18-system-prompt-updates 568cfc1b anthropic anthropic/claude-opus-4-8
case_ pi-1.6.0 18-system-prompt-updates f5413c39 anthropic anthropic/claude-opus-4-8
case_ pi-1.6.0 20-context-edits default openai ollama/qwen2.5-coder:7b
case_ pi-1.6.0 20-context-edits 17511c77 anthropic anthropic/claude-sonnet-4-5
case_ pi-1.6.0 21-compaction-checkpoints default openai ollama/qwen2.5-coder:7b
case_ pi-1.6.0 21-compaction-checkpoints default anthropic anthropic/claude-opus-4-8
case_ pi-1.6.0 21-compaction-checkpoints 049c02b8 anthropic anthropic/claude-sonnet-4-5
case_ pi-1.6.0 22-two-fix-attempts adbfcbd8 anthropic anthropic/claude-sonnet-4-5
case_ pi-0.73.1 02-tool-use default openai ollama/qwen2.5-coder:7b
case_ pi-0.73.1 06-model-thinking default anthropic anthropic/claude-sonnet-4-5
case_ pi-0.73.1 11-bash-and-images default openai ollama/qwen2.5-coder:7b
case_ pi-0.73.1 11-bash-and-images default anthropic anthropic/claude-sonnet-4-5
case_ pi-0.73.1 16-errors-and-aborts default openai ollama/qwen2.5-coder:7b
case_ real large-session line300 openai ollama/qwen2.5-coder:7b
case_ real large-session line300 anthropic anthropic/claude-sonnet-4-5
case_ real before-compaction line400 anthropic anthropic/claude-opus-4-5
case_ payloads edge-cases default openai cerebras/qwen-3.8-27b
case_ payloads edge-cases default anthropic anthropic/claude-sonnet-4-5
case_ payloads edge-cases e17 openai ollama/qwen2.5-coder:7b
case_ payloads edge-cases e17 anthropic anthropic/claude-opus-4-8
