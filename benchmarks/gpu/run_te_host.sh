#!/usr/bin/env bash
# Megatron-Core's host time per layer with Transformer Engine's modules beside its local ones, on one lease (issue #35).
# Not a test, never run by CI.  Run on the lent GPU machine, from the repository root:
#
#     bash benchmarks/gpu/run_te_host.sh "$OUT"        (run's carry: [".te", "benchmarks/gpu/vendor"])
#     TE_ARCHIVE=.te/site-2.11.0.tar.xz bash benchmarks/gpu/run_te_host.sh "$OUT"    (another release)
#
# The image has PyTorch 2.11.0+cu130 and no Transformer Engine, and the machine reaches no index, so TE travels
# as one archive prepared here by benchmarks/gpu/pack_te.sh (see it for what it holds and why the core library's
# other architectures' device code is blanked), and Megatron-Core 0.16.1's Python tree as benchmarks/gpu/vendor
# (measure_megatron_host.py's docstring).
set -u
out=${1:?usage: run_te_host.sh OUT_DIR}
mkdir -p "$out"
site=/tmp/te-site
rm -rf "$site" && mkdir -p "$site"
archive=${TE_ARCHIVE:-.te/site.tar.xz}
tar -xJf "$archive" -C "$site" || { echo "cannot unpack $archive"; exit 2; }
nv=$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])')
echo "nvidia packages: $nv"; ls "$nv"
export PYTHONPATH="$site:benchmarks/gpu/vendor${PYTHONPATH:+:$PYTHONPATH}"
export LD_LIBRARY_PATH="$nv/cu13/lib:$nv/cudnn/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CUDNN_HOME="$nv/cudnn" CUDA_HOME="$nv/cu13" NVTE_CUDA_INCLUDE_DIR="$nv/cu13/include"
export PYTHONUNBUFFERED=1
# one TE layer forward and backward, and which attention back end TE picks, before the measurement
NVTE_DEBUG=1 NVTE_DEBUG_LEVEL=1 python3 - <<'EOF' 2>&1 | tee "$out/te_smoke.txt" | tail -20
import time, torch, transformer_engine, transformer_engine.pytorch as te
print("torch", torch.__version__, "te", transformer_engine.__version__, torch.cuda.get_device_name())
layer = te.TransformerLayer(64, 256, 4, hidden_dropout=0.0, attention_dropout=0.0, params_dtype=torch.bfloat16,
                            self_attn_mask_type="causal").cuda()
x = torch.randn(64, 1, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
for _ in range(3):
    layer(x).float().mean().backward()
torch.cuda.synchronize(); t = time.perf_counter()
for _ in range(50):
    layer(x).float().mean().backward()
torch.cuda.synchronize(); print(f"te.TransformerLayer fwd+bwd {1e3 * (time.perf_counter() - t) / 50:.3f} ms")
EOF
specs=${LGACC_SPECS:-local,transformer_engine,transformer_engine_fused,local_moe,transformer_engine_moe}
LGACC_SPECS=$specs python3 benchmarks/gpu/measure_megatron_host.py "$out/te"
rc=$?
# TE's fused attention refused or failed: the TE rows again with its unfused attention, labelled as such
if ! grep -q '^transformer_engine' "$out/te/megatron_host.csv" 2>/dev/null; then
    echo "no transformer_engine rows: again with NVTE_FUSED_ATTN=0 NVTE_FLASH_ATTN=0"
    NVTE_FUSED_ATTN=0 NVTE_FLASH_ATTN=0 LGACC_SPECS=local,transformer_engine \
        python3 benchmarks/gpu/measure_megatron_host.py "$out/te_unfused"
fi
exit $rc
