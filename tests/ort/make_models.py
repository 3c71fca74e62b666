# make_models.py DIR - the ONNX models that test_onnxruntime profiles with ONNX Runtime:
# the guide's MLP (Linear 256->512, ReLU, Linear 512->64 on a batch of 128, as
# PyTorch's torch.onnx.export writes it: Gemm, Relu, Gemm, node names /fc1/Gemm...)
# and a small conv net (two Conv+Relu, MaxPool, Flatten, Gemm). Built with
# Debian's python3-onnx; weights from a seeded generator.
import sys, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper as nh
rng = np.random.default_rng(0)
def w(name, *shape): return nh.from_array(rng.standard_normal(shape).astype(np.float32) * 0.05, name)
# the guide's MLP: Linear(256, 512), ReLU, Linear(512, 64), batch 128
mlp = helper.make_graph(
    [helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], name="/fc1/Gemm", transB=1),
     helper.make_node("Relu", ["h"], ["r"], name="/relu/Relu"),
     helper.make_node("Gemm", ["r", "fc2.weight", "fc2.bias"], ["y"], name="/fc2/Gemm", transB=1)],
    "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [128, 256])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [128, 64])],
    [w("fc1.weight", 512, 256), w("fc1.bias", 512), w("fc2.weight", 64, 512), w("fc2.bias", 64)])
onnx.save(helper.make_model(mlp, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1] + "/mlp.onnx")
conv = helper.make_graph(
    [helper.make_node("Conv", ["x", "conv1.weight", "conv1.bias"], ["c1"], name="/conv1/Conv", pads=[1,1,1,1]),
     helper.make_node("Relu", ["c1"], ["r1"], name="/relu1/Relu"),
     helper.make_node("MaxPool", ["r1"], ["p1"], name="/pool/MaxPool", kernel_shape=[2,2], strides=[2,2]),
     helper.make_node("Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"], name="/conv2/Conv", pads=[1,1,1,1]),
     helper.make_node("Relu", ["c2"], ["r2"], name="/relu2/Relu"),
     helper.make_node("Flatten", ["r2"], ["f"], name="/flatten/Flatten"),
     helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["y"], name="/fc/Gemm", transB=1)],
    "convnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 3, 32, 32])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 10])],
    [w("conv1.weight", 16, 3, 3, 3), w("conv1.bias", 16), w("conv2.weight", 32, 16, 3, 3), w("conv2.bias", 32),
     w("fc.weight", 10, 32 * 16 * 16), w("fc.bias", 10)])
onnx.save(helper.make_model(conv, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1] + "/convnet.onnx")
