// CPU kernels of the ONNX quantization ops: the reference's plain loops
// (ops/quantize/quantize.h). They convert weights and small activations;
// the weight-only quantized Linear has its own kernel. QuantizedGather
// (an embedding lookup) dequantises a few rows: the reference's loop too.
#include "ops/linalg/quantized_gather.h"
#include "ops/quantize/quantize.h"
#include "backends/cpu/kernel_table.h"

namespace seqrt::cpu {

void register_quantize_kernels(KernelTable& table) {
  table.add(
      CpuKernel{kOnnxDomain, "QuantizeLinear", run_quantize_linear, nullptr});
  table.add(CpuKernel{kOnnxDomain, "DequantizeLinear", run_dequantize_linear,
                      nullptr});
  table.add(CpuKernel{kOnnxDomain, "DynamicQuantizeLinear",
                      run_dynamic_quantize_linear, nullptr});
  table.add(
      CpuKernel{kOnnxDomain, "MatMulInteger", run_matmul_integer, nullptr});
  table.add(
      CpuKernel{kOnnxDomain, "QLinearMatMul", run_qlinear_matmul, nullptr});
  table.add(CpuKernel{kSeqrtDomain, "QuantizedGather", run_quantized_gather,
                      nullptr});
}

}  // namespace seqrt::cpu
