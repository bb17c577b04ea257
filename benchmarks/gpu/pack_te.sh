#!/usr/bin/env bash
# Prepare, on the development machine (x86-64, PyPI reachable, no GPU), the Transformer Engine that
# run_te_host.sh unpacks on the lent GPU machine: .te/site.tar.xz, about 25 MB.  Not a test, never run by CI.
#
#     bash benchmarks/gpu/pack_te.sh WORK_DIR        (writes .te/site.tar.xz; .te/ is ignored by git)
#     TE_VERSION=2.11.0 bash benchmarks/gpu/pack_te.sh WORK_DIR    (another release: .te/site-2.11.0.tar.xz)
#
# Transformer Engine 2.9.0 (Nov 2025: the first release with CUDA 13 wheels, which the image's PyTorch
# 2.11.0+cu130 needs; TE's CPU-overhead work came after, TransformerEngine#2126, Jan 2026) comes as three PyPI
# packages: transformer_engine (Python), transformer_engine_cu13 (the core library) and transformer_engine_torch,
# an sdist that compiles against the installed PyTorch.  It is compiled here, against PyTorch 2.11.0+cu130 from
# PyPI (the image's version and CUDA) with CUDA 13.0's headers from their PyPI packages, on Python 3.12 (the
# image's).  The core library's device code for other GPUs than sm_90 is blanked (blank_fatbin.py).
set -euo pipefail
work=${1:?usage: pack_te.sh WORK_DIR}
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work" && cd "$work"
py=${PYTHON312:-python3.12}
te=${TE_VERSION:-2.9.0}
archive=site.tar.xz; [ "$te" = 2.9.0 ] || archive=site-$te.tar.xz
pins=(transformer_engine_cu13==$te transformer_engine==$te pydantic==2.14.4 pydantic-core==2.50.5
      annotated-types==0.8.0 typing-inspection==0.4.5 typing_extensions==4.16.0)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d wheels "${pins[@]}" torch==2.11.0
# the sdist: pip would build it to read its metadata, so it is fetched from the index page directly
url=$(curl -sS https://pypi.org/simple/transformer-engine-torch/ \
      | grep -o "https://[^\"#]*transformer_engine_torch-$te.tar.gz" | head -1)
curl -sS -o te_torch.tar.gz "$url" && tar -xzf te_torch.tar.gz
# a build environment: PyPI's torch 2.11.0 (+cu130) and CUDA 13.0's headers and compiler
"$py" -m venv build-venv
build-venv/bin/pip install -q --no-deps wheels/torch-2.11.0-*.whl
build-venv/bin/pip install -q "setuptools<82" wheel packaging ninja pybind11 numpy typing-extensions filelock \
    sympy networkx jinja2 fsspec nvidia-cudnn-cu13==9.19.0.56 nvidia-cusparselt-cu13==0.8.0 \
    nvidia-nccl-cu13==2.28.9 nvidia-nvshmem-cu13==3.4.5 \
    "cuda-toolkit[cublas,cudart,cufft,cufile,cupti,curand,cusolver,cusparse,nvjitlink,nvrtc,nvtx,nvcc,cccl]==13.0.2"
nv=$(build-venv/bin/python -c 'import nvidia; print(list(nvidia.__path__)[0])')
mkdir -p cuda-home/include && ln -sfn "$nv/cu13/bin" cuda-home/bin && ln -sfn "$nv/cu13/lib" cuda-home/lib64
for f in "$nv"/cu13/include/* "$nv"/cudnn/include/* "$nv"/nccl/include/*; do ln -sfn "$f" cuda-home/include/; done
(cd "transformer_engine_torch-$te" && CUDA_HOME="$work/cuda-home" PATH="$work/cuda-home/bin:$PATH" MAX_JOBS=2 \
    NVTE_CUDA_ARCHS=90 CPATH="$work/cuda-home/include/cccl" ../build-venv/bin/python setup.py build_ext -b "$work/ext")
rm -rf site && build-venv/bin/pip install -q --no-deps --no-compile --target site \
    wheels/transformer_engine_cu13-$te-*.whl wheels/transformer_engine-$te-*.whl wheels/pydantic*.whl \
    wheels/annotated_types-*.whl wheels/typing_inspection-*.whl wheels/typing_extensions-*.whl
cp ext/transformer_engine/wheel_lib/transformer_engine_torch.cpython-312-x86_64-linux-gnu.so site/transformer_engine/wheel_lib/
lib=site/transformer_engine/wheel_lib/libtransformer_engine.so
python3 "$repo/benchmarks/gpu/blank_fatbin.py" "$lib" "$lib.sm90" && mv "$lib.sm90" "$lib"
mkdir -p "$repo/.te" && tar -C site -cf - . | xz -T2 -9 > "$repo/.te/$archive"
ls -l "$repo/.te/$archive"
