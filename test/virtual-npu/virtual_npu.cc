// Tandem's virtual NPU: a plugin execution-provider library for ONNX Runtime (C API only, version 29+).
//
// It declares one hardware device of type NPU and keeps a laptop NPU's contract: it claims only nodes whose
// inputs and outputs all have static shapes, whose element types are int8/uint8/int32/fp16/fp32, and whose op is
// on the session's list (provider option `ops`, default below); everything else is refused with a reason, so
// ONNX Runtime's partitioning and "a graph the device cannot take is reported, never silently run on the CPU"
// can be tested. Each run of consecutive claimed nodes becomes one fused node; Compile rebuilds that subgraph with
// the Model Editor API and runs it in an inner CPU session, so results are those of ONNX Runtime's own CPU kernels
// (and the device holds its own copy of the weights it runs, as an NPU does). An optional throughput model (provider options
// `launch_us` and `gops`) makes each node take at least launch_us + work / gops, like a device with its own
// speed, and `compile_ms` makes compiling each fused graph from its ONNX subgraph take at least that long, like an
// NPU compiler (loading a compiled blob does not pay it). Counters (nodes claimed, refused, run; modelled time;
// context blobs written and loaded) are read with TandemVirtualNpu_Stats.
//
// EPContext (compiled-model cache, https://onnxruntime.ai/docs/execution-providers/EP-Context-Design.html): with
// the session config entry ep.context_enable=1, Compile writes each fused graph's "compiled blob" (the inner
// subgraph as an ONNX model, `<context model stem>_<fused node>.vnpu.onnx`) next to the context model at
// ep.context_file_path and hands ONNX Runtime an EPContext node pointing at it (embed_mode 0 only). A session
// opened on that context model claims each of this provider's EPContext nodes and loads its blob instead of
// compiling, so a warm start skips compile_ms.
//
// A test fixture, built by the test setup (main/engine/devices/virtual-npu.ts) and never shipped in the app.

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "onnxruntime_c_api.h"

#if defined(_WIN32)
#define VNPU_EXPORT extern "C" __declspec(dllexport)
#else
#define VNPU_EXPORT extern "C" __attribute__((visibility("default")))
#endif

namespace {

const OrtApi* ort = nullptr;
const OrtEpApi* ep_api = nullptr;

constexpr const char* kEpName = "TandemVirtualNPU";
constexpr const char* kVendor = "Tandem";
constexpr uint32_t kVendorId = 0x7A4E;  // not a PCI vendor id: this hardware does not exist
constexpr const char* kVersion = "1.0.0";
constexpr const char* kDescription = "Virtual NPU (test provider, runs on the CPU)";

// Ops this provider can run, with the domain ONNX Runtime's CPU kernels are registered under.
struct RunnableOp {
  const char* domain;
  const char* type;
};
const RunnableOp kRunnable[] = {
    {"", "MatMul"}, {"", "Gemm"}, {"", "Add"}, {"", "Sub"}, {"", "Mul"}, {"", "Div"}, {"", "Sigmoid"},
    {"", "Sqrt"}, {"", "Pow"}, {"", "Reciprocal"}, {"", "ReduceMean"}, {"", "Cast"}, {"", "MatMulInteger"},
    {"", "QLinearMatMul"}, {"", "QuantizeLinear"}, {"", "DequantizeLinear"}, {"", "DynamicQuantizeLinear"},
    {"", "Concat"}, {"", "Split"}, {"", "Reshape"}, {"", "Transpose"}, {"", "Slice"}, {"", "Squeeze"},
    {"", "Unsqueeze"},
    {"", "SimplifiedLayerNormalization"}, {"com.microsoft", "SkipSimplifiedLayerNormalization"},
    {"com.microsoft", "MatMulNBits"}};

// The default `ops` list: what an integer/fp16 laptop NPU takes for the linear and norm parts of a decoder.
constexpr const char* kDefaultOps =
    "MatMul,Gemm,Add,Sub,Mul,Div,Sigmoid,Sqrt,Pow,Reciprocal,ReduceMean,MatMulInteger,QLinearMatMul,"
    "QuantizeLinear,DequantizeLinear,DynamicQuantizeLinear,SimplifiedLayerNormalization,"
    "SkipSimplifiedLayerNormalization,Concat,Split,Reshape,Transpose,Slice,Squeeze,Unsqueeze";

// Counters for the whole process (one virtual device); read by TandemVirtualNpu_Stats.
std::atomic<uint64_t> g_nodes_claimed{0};
std::atomic<uint64_t> g_nodes_refused{0};
std::atomic<uint64_t> g_nodes_run{0};
std::atomic<uint64_t> g_graph_runs{0};
std::atomic<uint64_t> g_graphs_compiled{0};
std::atomic<uint64_t> g_busy_ns{0};
std::atomic<uint64_t> g_modelled_ns{0};
std::atomic<uint64_t> g_context_blobs_written{0};
std::atomic<uint64_t> g_context_blobs_loaded{0};
std::atomic<uint64_t> g_modelled_compile_ns{0};  // compile time compile_ms asked for (cold compiles only)
std::mutex g_refusal_mutex;
std::string g_last_refusal;

OrtStatus* Fail(const std::string& message) { return ort->CreateStatus(ORT_EP_FAIL, message.c_str()); }

#define VNPU_TRY(expr)                  \
  do {                                  \
    OrtStatus* vnpu_status_ = (expr);   \
    if (vnpu_status_) return vnpu_status_; \
  } while (0)

std::string Trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t");
  size_t b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

const RunnableOp* FindRunnable(const std::string& type) {
  for (const auto& op : kRunnable)
    if (type == op.type) return &op;
  return nullptr;
}

// Options of one EP instance (one session), from the session's provider options.
struct Config {
  std::set<std::string> ops;
  double launch_us = 0;  // fixed cost per node, microseconds
  double gops = 0;       // work per second in 1e9 units (multiply-adds count 2); 0 = no throughput model
  int threads = 0;       // threads of the inner CPU sessions; 0 = ONNX Runtime's default
  double compile_ms = 0;  // modelled compile time per fused graph compiled from ONNX (not when loading a blob)
  bool context_enable = false;    // session config ep.context_enable=1: write an EPContext model
  std::string context_file_path;  // session config ep.context_file_path: where ONNX Runtime writes it
};

// A session config entry by its full key.
OrtStatus* ReadEntry(const OrtSessionOptions* options, const std::string& key, std::string& value, bool& found) {
  int has = 0;
  VNPU_TRY(ort->HasSessionConfigEntry(options, key.c_str(), &has));
  found = has != 0;
  if (!found) return nullptr;
  size_t size = 0;
  VNPU_TRY(ort->GetSessionConfigEntry(options, key.c_str(), nullptr, &size));
  std::vector<char> buf(size + 1, '\0');
  VNPU_TRY(ort->GetSessionConfigEntry(options, key.c_str(), buf.data(), &size));
  value.assign(buf.data());
  return nullptr;
}

// A provider option: ONNX Runtime stores them as session config entries ep.<lowercased ep name>.<key>.
OrtStatus* ReadOption(const OrtSessionOptions* options, const char* key, std::string& value, bool& found) {
  return ReadEntry(options, std::string("ep.") + "tandemvirtualnpu." + key, value, found);
}

OrtStatus* ParseNumber(const char* key, const std::string& text, double& out) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end == nullptr || *end != '\0' || !(v >= 0) || v > 1e12)
    return ort->CreateStatus(ORT_INVALID_ARGUMENT, (std::string(kEpName) + ": option " + key +
                                                    " must be a non-negative number, got \"" + text + "\"").c_str());
  out = v;
  return nullptr;
}

OrtStatus* ReadConfig(const OrtSessionOptions* options, Config& config) {
  std::string ops = kDefaultOps, text;
  bool found = false;
  if (options) {
    VNPU_TRY(ReadOption(options, "ops", text, found));
    if (found) ops = text;
    VNPU_TRY(ReadOption(options, "launch_us", text, found));
    if (found) VNPU_TRY(ParseNumber("launch_us", text, config.launch_us));
    VNPU_TRY(ReadOption(options, "gops", text, found));
    if (found) VNPU_TRY(ParseNumber("gops", text, config.gops));
    VNPU_TRY(ReadOption(options, "threads", text, found));
    double threads = 0;
    if (found) VNPU_TRY(ParseNumber("threads", text, threads));
    if (threads > 256) return ort->CreateStatus(ORT_INVALID_ARGUMENT, "TandemVirtualNPU: option threads must be at most 256");
    config.threads = static_cast<int>(threads);
    VNPU_TRY(ReadOption(options, "compile_ms", text, found));
    if (found) VNPU_TRY(ParseNumber("compile_ms", text, config.compile_ms));
    if (config.compile_ms > 3.6e6)
      return ort->CreateStatus(ORT_INVALID_ARGUMENT, "TandemVirtualNPU: option compile_ms must be at most 3600000 (an hour)");
    // EPContext settings are ONNX Runtime's own session config entries, shared by every compiling provider
    VNPU_TRY(ReadEntry(options, "ep.context_enable", text, found));
    if (found && text != "0" && text != "1")
      return ort->CreateStatus(ORT_INVALID_ARGUMENT, ("TandemVirtualNPU: ep.context_enable must be 0 or 1, got \"" + text + "\"").c_str());
    config.context_enable = found && text == "1";
    VNPU_TRY(ReadEntry(options, "ep.context_file_path", text, found));
    if (found) config.context_file_path = text;
    VNPU_TRY(ReadEntry(options, "ep.context_embed_mode", text, found));
    if (found && text != "0" && text != "1")
      return ort->CreateStatus(ORT_INVALID_ARGUMENT, ("TandemVirtualNPU: ep.context_embed_mode must be 0 or 1, got \"" + text + "\"").c_str());
    // an NPU's compiled blob can be large; this device always writes it to a file beside the context model
    if (config.context_enable && found && text == "1")
      return ort->CreateStatus(ORT_INVALID_ARGUMENT,
                               "TandemVirtualNPU: ep.context_embed_mode=1 is not supported: the virtual NPU writes its "
                               "compiled blobs to files beside the context model (use ep.context_embed_mode=0)");
  }
  std::stringstream list(ops);
  std::string item;
  while (std::getline(list, item, ',')) {
    item = Trim(item);
    if (item.empty()) continue;
    if (!FindRunnable(item))
      return ort->CreateStatus(ORT_INVALID_ARGUMENT,
                               (std::string(kEpName) + ": cannot run op \"" + item + "\" (option ops)").c_str());
    config.ops.insert(item);
  }
  return nullptr;
}

// One attribute copied out of a node (the graph it came from does not outlive partitioning).
struct Attr {
  std::string name;
  OrtOpAttrType type;
  std::vector<char> bytes;  // ReadOpAttr's encoding: int64 / int64[] / float / float[] / chars
  int len;                  // element count as CreateOpAttr wants it
};

// What GetCapability learns about a node it claims.
struct NodePlan {
  std::string type, domain;
  int version = 0;
  std::vector<std::vector<int64_t>> output_shapes;
  double work = 0;  // operations, for the throughput model
};

bool IsStaticTensor(const OrtValueInfo* info, ONNXTensorElementDataType& type, std::vector<int64_t>& shape,
                    std::string& why, bool constant = false) {
  const OrtTypeInfo* type_info = nullptr;
  const OrtTensorTypeAndShapeInfo* tensor = nullptr;
  if (ort->GetValueInfoTypeInfo(info, &type_info) || !type_info ||
      ort->CastTypeInfoToTensorInfo(type_info, &tensor) || !tensor) {
    why = "not a tensor";
    return false;
  }
  size_t rank = 0;
  if (ort->GetTensorElementType(tensor, &type) || ort->GetDimensionsCount(tensor, &rank)) {
    why = "no type information";
    return false;
  }
  shape.assign(rank, 0);
  if (rank && ort->GetDimensions(tensor, shape.data(), rank)) {
    why = "no shape information";
    return false;
  }
  for (int64_t d : shape)
    if (d < 0) {
      why = "dynamic shape";
      return false;
    }
  switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
      return true;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64:
      if (constant) return true;  // shapes, axes, split sizes: constants an NPU compiler folds in
      why = "element type int64 (only as a constant)";
      return false;
    default:
      why = "element type " + std::to_string(static_cast<int>(type)) + " (takes int8/uint8/int32/fp16/fp32)";
      return false;
  }
}

// A node's inputs and outputs (an absent optional one is null).
OrtStatus* NodeValues(const OrtNode* node, std::vector<const OrtValueInfo*>& inputs, std::vector<const OrtValueInfo*>& outputs) {
  size_t n_in = 0, n_out = 0;
  VNPU_TRY(ort->Node_GetNumInputs(node, &n_in));
  VNPU_TRY(ort->Node_GetNumOutputs(node, &n_out));
  inputs.assign(n_in, nullptr);
  outputs.assign(n_out, nullptr);
  if (n_in) VNPU_TRY(ort->Node_GetInputs(node, inputs.data(), n_in));
  if (n_out) VNPU_TRY(ort->Node_GetOutputs(node, outputs.data(), n_out));
  return nullptr;
}

// The names of a node's inputs and outputs ("" for an absent optional one), valid while the graph lives.
OrtStatus* NodeValueNames(const OrtNode* node, std::vector<const char*>& inputs, std::vector<const char*>& outputs) {
  std::vector<const OrtValueInfo*> vi, vo;
  VNPU_TRY(NodeValues(node, vi, vo));
  inputs.clear();
  outputs.clear();
  for (const OrtValueInfo* v : vi) {
    const char* n = "";
    if (v) VNPU_TRY(ort->GetValueInfoName(v, &n));
    inputs.push_back(n);
  }
  for (const OrtValueInfo* v : vo) {
    const char* n = "";
    if (v) VNPU_TRY(ort->GetValueInfoName(v, &n));
    outputs.push_back(n);
  }
  return nullptr;
}

double Elements(const std::vector<int64_t>& shape) {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

OrtStatus* CopyAttrs(const OrtNode* node, std::vector<Attr>& out, std::string& why) {
  size_t n = 0;
  VNPU_TRY(ort->Node_GetNumAttributes(node, &n));
  std::vector<const OrtOpAttr*> attrs(n);
  if (n) VNPU_TRY(ort->Node_GetAttributes(node, attrs.data(), n));
  for (const OrtOpAttr* a : attrs) {
    Attr copy;
    const char* name = nullptr;
    VNPU_TRY(ort->OpAttr_GetName(a, &name));
    VNPU_TRY(ort->OpAttr_GetType(a, &copy.type));
    copy.name = name;
    size_t size = 0;
    switch (copy.type) {
      case ORT_OP_ATTR_INT:
      case ORT_OP_ATTR_FLOAT:
        copy.bytes.resize(8);
        VNPU_TRY(ort->ReadOpAttr(a, copy.type, copy.bytes.data(), copy.bytes.size(), &size));
        copy.len = 1;
        break;
      case ORT_OP_ATTR_INTS:
      case ORT_OP_ATTR_FLOATS:
      case ORT_OP_ATTR_STRING: {
        // the first call reports the size needed
        OrtStatus* probe = ort->ReadOpAttr(a, copy.type, nullptr, 0, &size);
        if (probe) ort->ReleaseStatus(probe);
        copy.bytes.resize(size + 1, 0);
        VNPU_TRY(ort->ReadOpAttr(a, copy.type, copy.bytes.data(), size, &size));
        size_t unit = copy.type == ORT_OP_ATTR_INTS ? sizeof(int64_t) : copy.type == ORT_OP_ATTR_FLOATS ? sizeof(float) : 1;
        copy.len = static_cast<int>(size / unit);
        break;
      }
      default:
        why = std::string("attribute ") + name + " of an unsupported kind";
        return nullptr;
    }
    out.push_back(std::move(copy));
  }
  return nullptr;
}

// A node's attribute `name` of kind `type`; `attr` null when the node has none (NOT_FOUND is an answer, not a failure).
OrtStatus* FindAttr(const OrtNode* node, const char* name, OrtOpAttrType type, const char* kind, const OrtOpAttr*& attr) {
  attr = nullptr;
  OrtStatus* s = ort->Node_GetAttributeByName(node, name, &attr);
  if (s) {
    attr = nullptr;
    if (ort->GetErrorCode(s) != ORT_NOT_FOUND) return s;
    ort->ReleaseStatus(s);
    return nullptr;
  }
  if (!attr) return nullptr;
  OrtOpAttrType actual;
  VNPU_TRY(ort->OpAttr_GetType(attr, &actual));
  if (actual != type) return Fail(std::string(kEpName) + ": attribute " + name + " is not " + kind);
  return nullptr;
}

// A node's string attribute (`found` false when the node has no such attribute).
OrtStatus* StringAttr(const OrtNode* node, const char* name, std::string& value, bool& found) {
  const OrtOpAttr* attr = nullptr;
  found = false;
  value.clear();
  VNPU_TRY(FindAttr(node, name, ORT_OP_ATTR_STRING, "a string", attr));
  if (!attr) return nullptr;
  size_t size = 0;
  OrtStatus* probe = ort->ReadOpAttr(attr, ORT_OP_ATTR_STRING, nullptr, 0, &size);  // reports the size needed
  if (probe) ort->ReleaseStatus(probe);
  std::vector<char> bytes(size + 1, 0);
  VNPU_TRY(ort->ReadOpAttr(attr, ORT_OP_ATTR_STRING, bytes.data(), size, &size));
  value.assign(bytes.data(), size);
  found = true;
  return nullptr;
}

// A node's int attribute, `fallback` when it has none.
OrtStatus* IntAttr(const OrtNode* node, const char* name, int64_t fallback, int64_t& value) {
  const OrtOpAttr* attr = nullptr;
  value = fallback;
  VNPU_TRY(FindAttr(node, name, ORT_OP_ATTR_INT, "an int", attr));
  if (!attr) return nullptr;
  size_t size = 0;
  VNPU_TRY(ort->ReadOpAttr(attr, ORT_OP_ATTR_INT, &value, sizeof(value), &size));
  return nullptr;
}

bool IsEpContextNode(const std::string& type, const char* domain) {
  return type == "EPContext" && domain && std::strcmp(domain, "com.microsoft") == 0;
}

// Decides whether this device takes `node`; fills `plan` when it does, `why` when it does not.
OrtStatus* Examine(const OrtNode* node, const Config& config, NodePlan& plan, std::string& why) {
  const char* type = nullptr;
  const char* domain = nullptr;
  VNPU_TRY(ort->Node_GetOperatorType(node, &type));
  VNPU_TRY(ort->Node_GetDomain(node, &domain));
  VNPU_TRY(ort->Node_GetSinceVersion(node, &plan.version));
  plan.type = type;
  plan.domain = domain && std::strcmp(domain, "ai.onnx") != 0 ? domain : "";
  const RunnableOp* op = FindRunnable(plan.type);
  if (!op || plan.domain != op->domain || !config.ops.count(plan.type)) {
    why = "op not on this device's list";
    return nullptr;
  }
  std::vector<const OrtValueInfo*> inputs, outputs;
  VNPU_TRY(NodeValues(node, inputs, outputs));
  const size_t n_in = inputs.size(), n_out = outputs.size();
  std::vector<std::vector<int64_t>> in_shapes;
  for (size_t i = 0; i < n_in; i++) {
    if (!inputs[i]) {
      in_shapes.emplace_back();
      continue;
    }
    ONNXTensorElementDataType t;
    std::vector<int64_t> shape;
    std::string reason;
    bool constant = false;
    VNPU_TRY(ort->ValueInfo_IsConstantInitializer(inputs[i], &constant));
    if (!IsStaticTensor(inputs[i], t, shape, reason, constant)) {
      why = "input " + std::to_string(i) + ": " + reason;
      return nullptr;
    }
    in_shapes.push_back(shape);
  }
  for (size_t i = 0; i < n_out; i++) {
    if (!outputs[i]) continue;  // an optional output the graph leaves out
    ONNXTensorElementDataType t;
    std::vector<int64_t> shape;
    std::string reason;
    if (!IsStaticTensor(outputs[i], t, shape, reason)) {
      why = "output " + std::to_string(i) + ": " + reason;
      return nullptr;
    }
    plan.output_shapes.push_back(shape);
  }
  std::vector<Attr> attrs;
  VNPU_TRY(CopyAttrs(node, attrs, why));
  if (!why.empty()) return nullptr;
  // work: a matmul's multiply-adds (2 per element of the inner product), else one per output element
  double out_elems = plan.output_shapes.empty() ? 0 : Elements(plan.output_shapes[0]);
  bool matmul = plan.type == "MatMul" || plan.type == "Gemm" || plan.type == "MatMulInteger" ||
                plan.type == "QLinearMatMul" || plan.type == "MatMulNBits";
  double k = !in_shapes.empty() && !in_shapes[0].empty() ? static_cast<double>(in_shapes[0].back()) : 1;
  plan.work = matmul ? 2 * out_elems * k : out_elems;
  return nullptr;
}

struct VirtualNpuFactory : OrtEpFactory {
  std::string registration_name;
  OrtHardwareDevice* npu = nullptr;
  OrtEnv* env = nullptr;  // the process's env (ONNX Runtime hands every CreateEnv the same one)
  std::mutex mutex;
};

void Log(const OrtLogger* logger, const std::string& message) {
  if (!logger) return;
  OrtStatus* s = ort->Logger_LogMessage(logger, ORT_LOGGING_LEVEL_INFO, message.c_str(), ORT_TSTR(__FILE__), __LINE__,
                                        "TandemVirtualNPU");
  if (s) ort->ReleaseStatus(s);
}

size_t ElementBytes(ONNXTensorElementDataType t) {
  switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64:
      return 8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32:
      return 4;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16:
      return 2;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL:
      return 1;
    default:
      return 0;
  }
}

// One compiled fused node: the inner CPU session that runs its subgraph, and what Compute needs.
struct CompiledGraph {
  OrtSession* session = nullptr;
  std::vector<std::string> input_names, output_names;
  std::vector<std::vector<int64_t>> output_shapes;
  size_t node_count = 0;
  double work = 0;
  Config config;
  ~CompiledGraph() {
    if (session) ort->ReleaseSession(session);
  }
};

struct VirtualNpuEp;

struct ComputeInfo : OrtNodeComputeInfo {
  std::unique_ptr<CompiledGraph> graph;
};

struct VirtualNpuEp : OrtEp {
  VirtualNpuFactory* factory;
  Config config;
  const OrtLogger* logger;
  std::mutex mutex;
  std::map<std::string, NodePlan> plans;  // claimed nodes by name, for Compile
  VirtualNpuEp(VirtualNpuFactory* f, Config c, const OrtLogger* l);
};

const char* ORT_API_CALL EpGetName(const OrtEp*) noexcept { return kEpName; }

OrtStatus* FuseGroup(VirtualNpuEp* ep, OrtEpGraphSupportInfo* support, std::vector<const OrtNode*>& group) {
  if (group.empty()) return nullptr;
  OrtNodeFusionOptions options{};
  options.ort_version_supported = ORT_API_VERSION;
  options.drop_constant_initializers = true;  // the device keeps its own copy of the weights (see Compile)
  VNPU_TRY(ep_api->EpGraphSupportInfo_AddNodesToFuse(support, group.data(), group.size(), &options));
  (void)ep;
  group.clear();
  return nullptr;
}

// Claims runs of consecutive supported nodes (in the graph's topological order); each run becomes one fused node.
// A run of consecutive nodes can never be left and re-entered through a refused node, so fusing it is always valid.
OrtStatus* ORT_API_CALL EpGetCapability(OrtEp* self, const OrtGraph* graph, OrtEpGraphSupportInfo* support) noexcept {
  auto* ep = static_cast<VirtualNpuEp*>(self);
  size_t n = 0;
  VNPU_TRY(ort->Graph_GetNumNodes(graph, &n));
  std::vector<const OrtNode*> nodes(n);
  if (n) VNPU_TRY(ort->Graph_GetNodes(graph, nodes.data(), n));
  std::vector<const OrtNode*> group;
  for (const OrtNode* node : nodes) {
    const char* name = nullptr;
    const char* type = nullptr;
    const char* domain = nullptr;
    VNPU_TRY(ort->Node_GetName(node, &name));
    VNPU_TRY(ort->Node_GetOperatorType(node, &type));
    VNPU_TRY(ort->Node_GetDomain(node, &domain));
    NodePlan plan;
    std::string why;
    if (IsEpContextNode(type, domain)) {
      // a graph this device compiled earlier: each EPContext node is one compiled blob, so it is a group of its own
      std::string source;
      bool has_source = false;
      VNPU_TRY(StringAttr(node, "source", source, has_source));
      if (source == kEpName) {
        VNPU_TRY(FuseGroup(ep, support, group));
        group.push_back(node);
        VNPU_TRY(FuseGroup(ep, support, group));
        g_nodes_claimed++;
        continue;
      }
      why = has_source ? "EPContext node of another provider (source \"" + source + "\")" : "EPContext node without a source";
    }
    if (why.empty() && (!name || !*name)) why = "unnamed node";
    if (why.empty()) VNPU_TRY(Examine(node, ep->config, plan, why));
    if (!why.empty()) {
      g_nodes_refused++;
      std::string message = std::string("refused node \"") + (name ? name : "") + "\" (" + type + "): " + why;
      {
        std::lock_guard<std::mutex> lock(g_refusal_mutex);
        g_last_refusal = message;
      }
      Log(ep->logger, message);
      VNPU_TRY(FuseGroup(ep, support, group));
      continue;
    }
    group.push_back(node);
    g_nodes_claimed++;
    std::lock_guard<std::mutex> lock(ep->mutex);
    ep->plans[name] = std::move(plan);
  }
  VNPU_TRY(FuseGroup(ep, support, group));
  return nullptr;
}

OrtStatus* ValueInfoOf(const OrtValueInfo* source, OrtValueInfo** out, std::string& name) {
  const char* n = nullptr;
  const OrtTypeInfo* type = nullptr;
  VNPU_TRY(ort->GetValueInfoName(source, &n));
  VNPU_TRY(ort->GetValueInfoTypeInfo(source, &type));
  name = n;
  return ort->GetModelEditorApi()->CreateValueInfo(n, type, out);
}

OrtStatus* StaticShape(const OrtValueInfo* info, std::vector<int64_t>& shape) {
  ONNXTensorElementDataType type;
  std::string why;
  if (!IsStaticTensor(info, type, shape, why)) return Fail(std::string(kEpName) + ": fused graph output: " + why);
  return nullptr;
}

// The inner CPU sessions' options: the EP's thread settings, one inter-op thread (the device runs one graph at a time).
OrtStatus* InnerSessionOptions(const Config& config, OrtSessionOptions*& options) {
  VNPU_TRY(ort->CreateSessionOptions(&options));
  OrtStatus* s = ort->SetIntraOpNumThreads(options, config.threads);
  if (!s) s = ort->SetInterOpNumThreads(options, 1);
  if (s) {
    ort->ReleaseSessionOptions(options);
    options = nullptr;
  }
  return s;
}

// Rebuilds one fused subgraph as a model of its own and opens it in a CPU session. With `blob` set, that session
// also saves the model it optimized there: the compiled blob an EPContext node points at.
OrtStatus* CompileOne(VirtualNpuEp* ep, const OrtGraph* graph, CompiledGraph& out, const std::filesystem::path& blob) {
  const OrtModelEditorApi* editor = ort->GetModelEditorApi();
  if (!editor) return Fail(std::string(kEpName) + ": this ONNX Runtime build has no Model Editor API");
  OrtGraph* inner = nullptr;
  VNPU_TRY(editor->CreateGraph(&inner));
  std::unique_ptr<OrtGraph, void (*)(OrtGraph*)> owned_graph(inner, ort->ReleaseGraph);

  size_t n_in = 0, n_out = 0, n_init = 0, n_nodes = 0;
  VNPU_TRY(ort->Graph_GetNumInputs(graph, &n_in));
  VNPU_TRY(ort->Graph_GetNumOutputs(graph, &n_out));
  VNPU_TRY(ort->Graph_GetNumInitializers(graph, &n_init));
  VNPU_TRY(ort->Graph_GetNumNodes(graph, &n_nodes));
  std::vector<const OrtValueInfo*> ins(n_in), outs(n_out), inits(n_init);
  std::vector<const OrtNode*> nodes(n_nodes);
  if (n_in) VNPU_TRY(ort->Graph_GetInputs(graph, ins.data(), n_in));
  if (n_out) VNPU_TRY(ort->Graph_GetOutputs(graph, outs.data(), n_out));
  if (n_init) VNPU_TRY(ort->Graph_GetInitializers(graph, inits.data(), n_init));
  if (n_nodes) VNPU_TRY(ort->Graph_GetNodes(graph, nodes.data(), n_nodes));

  std::vector<OrtValueInfo*> inputs, outputs;
  auto release_all = [](std::vector<OrtValueInfo*>& v) {
    for (OrtValueInfo* x : v) ort->ReleaseValueInfo(x);
    v.clear();
  };
  for (const OrtValueInfo* v : ins) {
    OrtValueInfo* copy = nullptr;
    std::string name;
    OrtStatus* s = ValueInfoOf(v, &copy, name);
    if (s) {
      release_all(inputs);
      return s;
    }
    inputs.push_back(copy);
    out.input_names.push_back(name);
  }
  OrtStatus* s = editor->SetGraphInputs(inner, inputs.data(), inputs.size());
  if (s) {
    release_all(inputs);
    return s;
  }
  for (const OrtValueInfo* v : outs) {
    OrtValueInfo* copy = nullptr;
    std::string name;
    std::vector<int64_t> shape;
    s = StaticShape(v, shape);
    if (!s) s = ValueInfoOf(v, &copy, name);
    if (s) {
      release_all(outputs);
      return s;
    }
    outputs.push_back(copy);
    out.output_names.push_back(name);
    out.output_shapes.push_back(shape);
  }
  s = editor->SetGraphOutputs(inner, outputs.data(), outputs.size());
  if (s) {
    release_all(outputs);
    return s;
  }

  OrtAllocator* allocator = nullptr;
  VNPU_TRY(ort->GetAllocatorWithDefaultOptions(&allocator));
  for (const OrtValueInfo* v : inits) {
    const char* name = nullptr;
    const OrtValue* value = nullptr;
    VNPU_TRY(ort->GetValueInfoName(v, &name));
    VNPU_TRY(ort->ValueInfo_GetInitializerValue(v, &value));
    OrtTensorTypeAndShapeInfo* info = nullptr;
    VNPU_TRY(ort->GetTensorTypeAndShape(value, &info));
    ONNXTensorElementDataType type;
    size_t rank = 0, count = 0;
    std::vector<int64_t> shape;
    OrtStatus* st = ort->GetTensorElementType(info, &type);
    if (!st) st = ort->GetDimensionsCount(info, &rank);
    if (!st) shape.resize(rank);
    if (!st && rank) st = ort->GetDimensions(info, shape.data(), rank);
    if (!st) st = ort->GetTensorShapeElementCount(info, &count);
    ort->ReleaseTensorTypeAndShapeInfo(info);
    if (st) return st;
    if (ElementBytes(type) == 0) return Fail(std::string(kEpName) + ": initializer " + name + " has an unsupported type");
    OrtValue* copy = nullptr;
    VNPU_TRY(ort->CreateTensorAsOrtValue(allocator, shape.data(), rank, type, &copy));
    void* dst = nullptr;
    void* src = nullptr;
    s = ort->GetTensorMutableData(copy, &dst);
    if (!s) s = ort->GetTensorMutableData(const_cast<OrtValue*>(value), &src);
    if (!s && count) std::memcpy(dst, src, count * ElementBytes(type));
    if (!s) s = editor->AddInitializerToGraph(inner, name, copy, false);
    if (s) {
      ort->ReleaseValue(copy);
      return s;
    }
  }

  for (const OrtNode* node : nodes) {
    const char* type = nullptr;
    const char* domain = nullptr;
    const char* name = nullptr;
    VNPU_TRY(ort->Node_GetOperatorType(node, &type));
    VNPU_TRY(ort->Node_GetDomain(node, &domain));
    VNPU_TRY(ort->Node_GetName(node, &name));
    std::vector<const char*> in_names, out_names;
    VNPU_TRY(NodeValueNames(node, in_names, out_names));
    std::vector<Attr> attrs;
    std::string why;
    VNPU_TRY(CopyAttrs(node, attrs, why));
    if (!why.empty()) return Fail(std::string(kEpName) + ": node " + name + ": " + why);
    std::vector<OrtOpAttr*> made;
    s = nullptr;
    for (const Attr& a : attrs) {
      OrtOpAttr* attr = nullptr;
      s = ort->CreateOpAttr(a.name.c_str(), a.bytes.data(), a.len, a.type, &attr);
      if (s) break;
      made.push_back(attr);
    }
    OrtNode* copy = nullptr;
    if (!s)
      s = editor->CreateNode(type, domain, name, in_names.data(), in_names.size(), out_names.data(), out_names.size(),
                             made.data(), made.size(), &copy);
    for (OrtOpAttr* a : made) ort->ReleaseOpAttr(a);
    if (!s) s = editor->AddNodeToGraph(inner, copy);
    if (s) {
      if (copy) ort->ReleaseNode(copy);
      return s;
    }
    out.node_count++;
    std::lock_guard<std::mutex> lock(ep->mutex);
    auto it = ep->plans.find(name);
    if (it != ep->plans.end()) out.work += it->second.work;
  }

  size_t n_sets = 0;
  VNPU_TRY(ort->Graph_GetNumOperatorSets(graph, &n_sets));
  std::vector<const char*> domains(n_sets);
  std::vector<int64_t> versions64(n_sets);
  if (n_sets) VNPU_TRY(ort->Graph_GetOperatorSets(graph, domains.data(), versions64.data(), n_sets));
  std::vector<int> versions(versions64.begin(), versions64.end());
  OrtModel* model = nullptr;
  VNPU_TRY(editor->CreateModel(domains.data(), versions.data(), n_sets, &model));
  std::unique_ptr<OrtModel, void (*)(OrtModel*)> owned_model(model, ort->ReleaseModel);
  VNPU_TRY(editor->AddGraphToModel(model, inner));
  owned_graph.release();

  OrtSessionOptions* options = nullptr;
  VNPU_TRY(InnerSessionOptions(ep->config, options));
  std::unique_ptr<OrtSessionOptions, void (*)(OrtSessionOptions*)> owned_options(options, ort->ReleaseSessionOptions);
  if (!blob.empty()) {
    // Extended, not all: level 3 adds layout transforms for this CPU's instruction set, and ONNX Runtime warns a
    // model saved after them only loads where it was made. Weights go to a file beside the blob (from 1 KiB up),
    // so a large subgraph never hits protobuf's 2 GB limit.
    VNPU_TRY(ort->SetSessionGraphOptimizationLevel(options, ORT_ENABLE_EXTENDED));
    VNPU_TRY(ort->SetOptimizedModelFilePath(options, blob.c_str()));
    std::string weights = blob.filename().string() + ".data";
    VNPU_TRY(ort->AddSessionConfigEntry(options, "session.optimized_model_external_initializers_file_name", weights.c_str()));
  }
  VNPU_TRY(editor->CreateSessionFromModel(ep->factory->env, model, options, &out.session));
  out.config = ep->config;
  return nullptr;
}

// The directory of the model ONNX Runtime is compiling (empty when it was opened from bytes).
OrtStatus* ModelDir(const OrtGraph* graph, std::filesystem::path& model, bool& known) {
  const ORTCHAR_T* path = nullptr;
  VNPU_TRY(ort->Graph_GetModelPath(graph, &path));
  known = path && *path;
  if (known) model = std::filesystem::path(path);
  return nullptr;
}

// Only letters, digits, '-', '_' and '.' in a file name made from a node name.
std::string FileSafe(const std::string& name) {
  std::string out = name;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return out;
}

// Where the EPContext model goes: ep.context_file_path, else ONNX Runtime's default <model>_ctx.onnx.
OrtStatus* ContextModelPath(VirtualNpuEp* ep, const OrtGraph* graph, std::filesystem::path& out) {
  if (!ep->config.context_file_path.empty()) {
    out = std::filesystem::path(ep->config.context_file_path);
    return nullptr;
  }
  std::filesystem::path model;
  bool known = false;
  VNPU_TRY(ModelDir(graph, model, known));
  if (!known)
    return Fail(std::string(kEpName) + ": ep.context_enable=1 needs ep.context_file_path when the model is not opened "
                                       "from a file (the compiled blobs are written beside the context model)");
  out = model;
  out.replace_extension();
  out += "_ctx.onnx";
  return nullptr;
}

// The EPContext node that stands for one compiled fused node in the context model.
OrtStatus* MakeContextNode(const OrtNode* fused, const std::string& blob_name, const CompiledGraph& g, OrtNode** out) {
  const char* name = nullptr;
  VNPU_TRY(ort->Node_GetName(fused, &name));
  std::vector<const char*> in_names, out_names;
  VNPU_TRY(NodeValueNames(fused, in_names, out_names));
  // what Compute needs that the blob does not carry: the throughput model's work and the node count
  std::ostringstream notes;
  notes.precision(17);
  notes << "work=" << g.work << ";nodes=" << g.node_count;
  const int64_t main_context = 1, embed_mode = 0;
  const std::string strings[][2] = {{"ep_cache_context", blob_name}, {"source", kEpName}, {"ep_sdk_version", kVersion},
                                    {"partition_name", name}, {"notes", notes.str()}};
  std::vector<OrtOpAttr*> attrs;
  auto release = [&attrs]() {
    for (OrtOpAttr* a : attrs) ort->ReleaseOpAttr(a);
  };
  OrtOpAttr* attr = nullptr;
  OrtStatus* s = ort->CreateOpAttr("main_context", &main_context, 1, ORT_OP_ATTR_INT, &attr);
  if (!s) attrs.push_back(attr);
  if (!s) s = ort->CreateOpAttr("embed_mode", &embed_mode, 1, ORT_OP_ATTR_INT, &attr);
  if (!s) attrs.push_back(attr);
  for (const auto& kv : strings) {
    if (s) break;
    s = ort->CreateOpAttr(kv[0].c_str(), kv[1].data(), static_cast<int>(kv[1].size()), ORT_OP_ATTR_STRING, &attr);
    if (!s) attrs.push_back(attr);
  }
  // CreateNode copies the attributes; ONNX Runtime owns the node it returns
  if (!s)
    s = ort->GetModelEditorApi()->CreateNode("EPContext", "com.microsoft", name, in_names.data(), in_names.size(),
                                             out_names.data(), out_names.size(), attrs.data(), attrs.size(), out);
  release();
  return s;
}

// Opens the compiled blob an EPContext node (the only node of `graph`) points at, instead of compiling.
OrtStatus* LoadContext(VirtualNpuEp* ep, const OrtGraph* graph, const OrtNode* node, CompiledGraph& out) {
  const char* node_name = nullptr;
  VNPU_TRY(ort->Node_GetName(node, &node_name));
  const std::string who = std::string(kEpName) + ": EPContext node \"" + (node_name ? node_name : "") + "\"";
  if (ep->config.context_enable)
    return ort->CreateStatus(ORT_INVALID_ARGUMENT,
                             (who + ": the model is already compiled (it holds EPContext nodes); open the original "
                                    "model to compile it again, or drop ep.context_enable").c_str());
  int64_t embed_mode = 1, main_context = 1;
  VNPU_TRY(IntAttr(node, "embed_mode", 1, embed_mode));  // the EPContext schema's defaults
  VNPU_TRY(IntAttr(node, "main_context", 1, main_context));
  if (embed_mode != 0)
    return Fail(who + ": embed_mode " + std::to_string(embed_mode) +
                " is not supported: the virtual NPU writes its blobs to files, embed_mode 0");
  if (main_context != 1) return Fail(who + ": main_context 0 (a blob shared with another node) is not supported");
  std::string cache, notes;
  bool has_cache = false, has_notes = false;
  VNPU_TRY(StringAttr(node, "ep_cache_context", cache, has_cache));
  VNPU_TRY(StringAttr(node, "notes", notes, has_notes));
  if (cache.empty()) return Fail(who + ": no ep_cache_context (the compiled blob's file name)");

  std::filesystem::path model;
  bool known = false;
  VNPU_TRY(ModelDir(graph, model, known));
  if (!known)
    return Fail(who + ": an EPContext model must be opened from a file: its compiled blob (" + cache +
                ") is found relative to the model's folder");
  // the blob must stay inside the model's folder: a model file must not make the device open arbitrary paths
  std::filesystem::path relative(cache);
  bool escapes = relative.is_absolute() || relative.has_root_path();
  for (const auto& part : relative)
    if (part == "..") escapes = true;
  if (escapes)
    return Fail(who + ": ep_cache_context \"" + cache + "\" leaves the model's folder (absolute paths and '..' are refused)");
  const std::filesystem::path blob = model.parent_path() / relative;
  std::error_code error;
  if (!std::filesystem::is_regular_file(blob, error))
    return Fail(who + ": compiled blob " + blob.string() + " is missing (deleted, or not copied along with the context model)");

  OrtSessionOptions* options = nullptr;
  VNPU_TRY(InnerSessionOptions(ep->config, options));
  std::unique_ptr<OrtSessionOptions, void (*)(OrtSessionOptions*)> owned_options(options, ort->ReleaseSessionOptions);
  OrtStatus* s = ort->CreateSession(ep->factory->env, blob.c_str(), options, &out.session);
  if (s) {
    std::string message = who + ": cannot load compiled blob " + blob.string() + ": " + ort->GetErrorMessage(s);
    ort->ReleaseStatus(s);
    return Fail(message);
  }

  // names in the fused node's order; shapes from the context model, else from what the blob declares
  size_t n_in = 0, n_out = 0;
  VNPU_TRY(ort->Graph_GetNumInputs(graph, &n_in));
  VNPU_TRY(ort->Graph_GetNumOutputs(graph, &n_out));
  std::vector<const OrtValueInfo*> ins(n_in), outs(n_out);
  if (n_in) VNPU_TRY(ort->Graph_GetInputs(graph, ins.data(), n_in));
  if (n_out) VNPU_TRY(ort->Graph_GetOutputs(graph, outs.data(), n_out));
  for (const OrtValueInfo* v : ins) {
    const char* n = nullptr;
    VNPU_TRY(ort->GetValueInfoName(v, &n));
    out.input_names.push_back(n);
  }
  size_t blob_outputs = 0;
  VNPU_TRY(ort->SessionGetOutputCount(out.session, &blob_outputs));
  OrtAllocator* allocator = nullptr;
  VNPU_TRY(ort->GetAllocatorWithDefaultOptions(&allocator));
  for (const OrtValueInfo* v : outs) {
    const char* n = nullptr;
    VNPU_TRY(ort->GetValueInfoName(v, &n));
    out.output_names.push_back(n);
    ONNXTensorElementDataType type;
    std::vector<int64_t> shape;
    std::string why;
    if (!IsStaticTensor(v, type, shape, why)) {
      bool found = false;
      for (size_t i = 0; i < blob_outputs && !found; i++) {
        char* blob_name = nullptr;
        VNPU_TRY(ort->SessionGetOutputName(out.session, i, allocator, &blob_name));
        bool same = std::strcmp(blob_name, n) == 0;
        VNPU_TRY(ort->AllocatorFree(allocator, blob_name));
        if (!same) continue;
        OrtTypeInfo* info = nullptr;
        VNPU_TRY(ort->SessionGetOutputTypeInfo(out.session, i, &info));
        const OrtTensorTypeAndShapeInfo* tensor = nullptr;
        size_t rank = 0;
        s = ort->CastTypeInfoToTensorInfo(info, &tensor);
        if (!s && tensor) s = ort->GetDimensionsCount(tensor, &rank);
        if (!s && tensor) {
          shape.assign(rank, 0);
          if (rank) s = ort->GetDimensions(tensor, shape.data(), rank);
        }
        ort->ReleaseTypeInfo(info);
        if (s) return s;
        found = tensor != nullptr;
        for (int64_t d : shape)
          if (d < 0) found = false;
      }
      if (!found) return Fail(who + ": output " + n + " has no static shape in the model or the blob");
    }
    out.output_shapes.push_back(shape);
  }

  // notes: "work=<operations>;nodes=<count>" (missing keys leave the throughput model at 0)
  std::stringstream fields(notes);
  std::string field;
  while (std::getline(fields, field, ';')) {
    size_t eq = field.find('=');
    if (eq == std::string::npos) continue;
    std::string key = Trim(field.substr(0, eq)), value = Trim(field.substr(eq + 1));
    char* end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    if (value.empty() || !end || *end != '\0' || !(v >= 0)) continue;
    if (key == "work") out.work = v;
    if (key == "nodes") out.node_count = static_cast<size_t>(v);
  }
  out.config = ep->config;
  return nullptr;
}

OrtStatus* ORT_API_CALL ComputeCreateState(OrtNodeComputeInfo* self, OrtNodeComputeContext*, void** state) {
  *state = static_cast<ComputeInfo*>(self)->graph.get();
  return nullptr;
}

void ORT_API_CALL ComputeReleaseState(OrtNodeComputeInfo*, void*) {}

OrtStatus* ORT_API_CALL ComputeRun(OrtNodeComputeInfo*, void* state, OrtKernelContext* context) {
  auto* g = static_cast<CompiledGraph*>(state);
  auto start = std::chrono::steady_clock::now();
  size_t available = 0;
  VNPU_TRY(ort->KernelContext_GetInputCount(context, &available));
  if (available != g->input_names.size())
    return Fail(std::string(kEpName) + ": fused node got " + std::to_string(available) + " inputs, expected " +
                std::to_string(g->input_names.size()));
  std::vector<const OrtValue*> inputs(available);
  for (size_t i = 0; i < available; i++) VNPU_TRY(ort->KernelContext_GetInput(context, i, &inputs[i]));
  std::vector<OrtValue*> outputs(g->output_names.size(), nullptr);
  for (size_t i = 0; i < outputs.size(); i++) {
    const auto& shape = g->output_shapes[i];
    VNPU_TRY(ort->KernelContext_GetOutput(context, i, shape.data(), shape.size(), &outputs[i]));
  }
  std::vector<const char*> in_names, out_names;
  for (const auto& n : g->input_names) in_names.push_back(n.c_str());
  for (const auto& n : g->output_names) out_names.push_back(n.c_str());
  VNPU_TRY(ort->Run(g->session, nullptr, in_names.data(), inputs.data(), inputs.size(), out_names.data(),
                    out_names.size(), outputs.data()));
  double modelled_ns = 0;
  if (g->config.gops > 0 || g->config.launch_us > 0) {
    modelled_ns = g->config.launch_us * 1e3 + (g->config.gops > 0 ? g->work / g->config.gops : 0);
    std::this_thread::sleep_until(start + std::chrono::nanoseconds(static_cast<int64_t>(modelled_ns)));
  }
  auto spent = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  g_busy_ns += static_cast<uint64_t>(spent);
  g_modelled_ns += static_cast<uint64_t>(modelled_ns);
  g_nodes_run += g->node_count;
  g_graph_runs++;
  return nullptr;
}

// Compiles (or, for an EPContext node, loads) one fused graph; writes its blob and EPContext node when asked.
OrtStatus* CompileOrLoad(VirtualNpuEp* ep, const OrtGraph* graph, const OrtNode* fused, CompiledGraph& out,
                         OrtNode** context_node) {
  size_t n_nodes = 0;
  VNPU_TRY(ort->Graph_GetNumNodes(graph, &n_nodes));
  if (n_nodes == 1) {
    const OrtNode* node = nullptr;
    const char* type = nullptr;
    const char* domain = nullptr;
    VNPU_TRY(ort->Graph_GetNodes(graph, &node, 1));
    VNPU_TRY(ort->Node_GetOperatorType(node, &type));
    VNPU_TRY(ort->Node_GetDomain(node, &domain));
    if (IsEpContextNode(type, domain)) {
      VNPU_TRY(LoadContext(ep, graph, node, out));
      g_context_blobs_loaded++;
      return nullptr;
    }
  }
  std::filesystem::path blob;
  std::string blob_name;
  if (ep->config.context_enable) {
    const char* fused_name = nullptr;
    VNPU_TRY(ort->Node_GetName(fused, &fused_name));
    std::filesystem::path context;
    VNPU_TRY(ContextModelPath(ep, graph, context));
    blob_name = context.stem().string() + "_" + FileSafe(fused_name ? fused_name : "") + ".vnpu.onnx";
    blob = context.parent_path() / blob_name;
  }
  // the modelled compiler: compiling from ONNX takes at least compile_ms, like an NPU's graph compiler
  auto start = std::chrono::steady_clock::now();
  VNPU_TRY(CompileOne(ep, graph, out, blob));
  if (ep->config.compile_ms > 0) {
    const double ns = ep->config.compile_ms * 1e6;
    std::this_thread::sleep_until(start + std::chrono::nanoseconds(static_cast<int64_t>(ns)));
    g_modelled_compile_ns += static_cast<uint64_t>(ns);
  }
  g_graphs_compiled++;
  if (!blob.empty()) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(blob, error))
      return Fail(std::string(kEpName) + ": ONNX Runtime did not write the compiled blob " + blob.string());
    g_context_blobs_written++;
    VNPU_TRY(MakeContextNode(fused, blob_name, out, context_node));
  }
  return nullptr;
}

OrtStatus* ORT_API_CALL EpCompile(OrtEp* self, const OrtGraph** graphs, const OrtNode** fused_nodes, size_t count,
                                  OrtNodeComputeInfo** infos, OrtNode** ep_context_nodes) noexcept {
  auto* ep = static_cast<VirtualNpuEp*>(self);
  for (size_t i = 0; i < count; i++) infos[i] = nullptr;
  for (size_t i = 0; i < count; i++) {
    auto compiled = std::make_unique<CompiledGraph>();
    // ONNX Runtime takes the EPContext nodes (and releases them) whether or not Compile succeeds
    OrtNode** context_node = ep->config.context_enable && ep_context_nodes ? &ep_context_nodes[i] : nullptr;
    OrtStatus* s = nullptr;
    try {
      s = CompileOrLoad(ep, graphs[i], fused_nodes[i], *compiled, context_node);
    } catch (const std::exception& e) {  // std::filesystem and allocation: never let one cross the C boundary
      s = Fail(std::string(kEpName) + ": " + e.what());
    }
    if (s) {
      for (size_t j = 0; j < i; j++) delete static_cast<ComputeInfo*>(infos[j]);
      for (size_t j = 0; j < i; j++) infos[j] = nullptr;
      return s;
    }
    auto* info = new ComputeInfo();
    info->ort_version_supported = ORT_API_VERSION;
    info->CreateState = ComputeCreateState;
    info->Compute = ComputeRun;
    info->ReleaseState = ComputeReleaseState;
    info->graph = std::move(compiled);
    infos[i] = info;
  }
  return nullptr;
}

void ORT_API_CALL EpReleaseNodeComputeInfos(OrtEp*, OrtNodeComputeInfo** infos, size_t count) noexcept {
  for (size_t i = 0; i < count; i++) delete static_cast<ComputeInfo*>(infos[i]);
}

VirtualNpuEp::VirtualNpuEp(VirtualNpuFactory* f, Config c, const OrtLogger* l) : OrtEp{}, factory(f), config(std::move(c)), logger(l) {
  ort_version_supported = ORT_API_VERSION;
  GetName = EpGetName;
  GetCapability = EpGetCapability;
  Compile = EpCompile;
  ReleaseNodeComputeInfos = EpReleaseNodeComputeInfos;
}

const char* ORT_API_CALL FactoryGetName(const OrtEpFactory*) noexcept { return kEpName; }
const char* ORT_API_CALL FactoryGetVendor(const OrtEpFactory*) noexcept { return kVendor; }
uint32_t ORT_API_CALL FactoryGetVendorId(const OrtEpFactory*) noexcept { return kVendorId; }
const char* ORT_API_CALL FactoryGetVersion(const OrtEpFactory*) noexcept { return kVersion; }

OrtStatus* AddPair(OrtKeyValuePairs* kvps, const char* key, const char* value) {
  ort->AddKeyValuePair(kvps, key, value);
  return nullptr;
}

// The virtual device does not depend on what the machine has: it is made once, when the runtime first asks.
OrtStatus* ORT_API_CALL FactoryGetSupportedDevices(OrtEpFactory* self, const OrtHardwareDevice* const* /*devices*/,
                                                   size_t /*num_devices*/, OrtEpDevice** ep_devices,
                                                   size_t max_ep_devices, size_t* num_ep_devices) noexcept {
  auto* factory = static_cast<VirtualNpuFactory*>(self);
  *num_ep_devices = 0;
  if (max_ep_devices < 1) return nullptr;
  std::lock_guard<std::mutex> lock(factory->mutex);
  if (!factory->npu) {
    OrtKeyValuePairs* hw = nullptr;
    ort->CreateKeyValuePairs(&hw);
    AddPair(hw, "Description", kDescription);
    AddPair(hw, "IsVirtual", "1");
    AddPair(hw, "DiscoveredBy", kEpName);
    OrtStatus* s = ep_api->CreateHardwareDevice(OrtHardwareDeviceType_NPU, kVendorId, 0, kVendor, hw, &factory->npu);
    ort->ReleaseKeyValuePairs(hw);
    if (s) return s;
  }
  OrtKeyValuePairs* metadata = nullptr;
  OrtKeyValuePairs* options = nullptr;
  ort->CreateKeyValuePairs(&metadata);
  ort->CreateKeyValuePairs(&options);
  AddPair(metadata, "simulated", "1");
  AddPair(metadata, "static_shapes_only", "1");
  AddPair(metadata, "element_types", "int8,uint8,int32,float16,float32");
  AddPair(metadata, "runs_on", "cpu");
  AddPair(metadata, "default_ops", kDefaultOps);
  AddPair(metadata, "options", "ops, launch_us, gops, threads, compile_ms");
  OrtEpDevice* device = nullptr;
  OrtStatus* s = ep_api->CreateEpDevice(factory, factory->npu, metadata, options, &device);
  ort->ReleaseKeyValuePairs(metadata);
  ort->ReleaseKeyValuePairs(options);
  if (s) return s;
  ep_devices[0] = device;
  *num_ep_devices = 1;
  return nullptr;
}

OrtStatus* ORT_API_CALL FactoryCreateEp(OrtEpFactory* self, const OrtHardwareDevice* const* /*devices*/,
                                        const OrtKeyValuePairs* const* /*metadata*/, size_t num_devices,
                                        const OrtSessionOptions* options, const OrtLogger* logger, OrtEp** out) noexcept {
  *out = nullptr;
  if (num_devices != 1) return ort->CreateStatus(ORT_INVALID_ARGUMENT, "TandemVirtualNPU runs on exactly one device");
  Config config;
  VNPU_TRY(ReadConfig(options, config));
  *out = new VirtualNpuEp(static_cast<VirtualNpuFactory*>(self), std::move(config), logger);
  return nullptr;
}

void ORT_API_CALL FactoryReleaseEp(OrtEpFactory*, OrtEp* ep) noexcept { delete static_cast<VirtualNpuEp*>(ep); }

OrtStatus* ORT_API_CALL FactoryCreateAllocator(OrtEpFactory*, const OrtMemoryInfo*, const OrtKeyValuePairs*,
                                               OrtAllocator** allocator) noexcept {
  *allocator = nullptr;  // CPU memory: ONNX Runtime's own allocator serves this device
  return nullptr;
}
void ORT_API_CALL FactoryReleaseAllocator(OrtEpFactory*, OrtAllocator*) noexcept {}
OrtStatus* ORT_API_CALL FactoryCreateDataTransfer(OrtEpFactory*, OrtDataTransferImpl** out) noexcept {
  *out = nullptr;  // nothing to copy: the device's memory is the CPU's
  return nullptr;
}
bool ORT_API_CALL FactoryIsStreamAware(const OrtEpFactory*) noexcept { return false; }
OrtStatus* ORT_API_CALL FactoryCreateSyncStream(OrtEpFactory*, const OrtMemoryDevice*, const OrtKeyValuePairs*,
                                                OrtSyncStreamImpl** out) noexcept {
  *out = nullptr;
  return nullptr;
}

}  // namespace

VNPU_EXPORT OrtStatus* CreateEpFactories(const char* registration_name, const OrtApiBase* base,
                                         const OrtLogger* /*logger*/, OrtEpFactory** factories, size_t max_factories,
                                         size_t* num_factories) {
  *num_factories = 0;
  const OrtApi* api = base->GetApi(ORT_API_VERSION);
  if (!api) return nullptr;  // an older runtime: offer nothing rather than crash
  ort = api;
  ep_api = ort->GetEpApi();
  if (max_factories < 1) return ort->CreateStatus(ORT_INVALID_ARGUMENT, "no room for the factory");
  auto* factory = new VirtualNpuFactory();
  factory->ort_version_supported = ORT_API_VERSION;
  factory->registration_name = registration_name ? registration_name : "";
  factory->GetName = FactoryGetName;
  factory->GetVendor = FactoryGetVendor;
  factory->GetVendorId = FactoryGetVendorId;
  factory->GetVersion = FactoryGetVersion;
  factory->GetSupportedDevices = FactoryGetSupportedDevices;
  factory->CreateEp = FactoryCreateEp;
  factory->ReleaseEp = FactoryReleaseEp;
  factory->CreateAllocator = FactoryCreateAllocator;
  factory->ReleaseAllocator = FactoryReleaseAllocator;
  factory->CreateDataTransfer = FactoryCreateDataTransfer;
  factory->IsStreamAware = FactoryIsStreamAware;
  factory->CreateSyncStreamForDevice = FactoryCreateSyncStream;
  OrtStatus* s = ort->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "tandem-virtual-npu", &factory->env);
  if (s) {
    delete factory;
    return s;
  }
  factories[0] = factory;
  *num_factories = 1;
  return nullptr;
}

VNPU_EXPORT OrtStatus* ReleaseEpFactory(OrtEpFactory* base) {
  auto* factory = static_cast<VirtualNpuFactory*>(base);
  if (factory->env) ort->ReleaseEnv(factory->env);
  if (factory->npu) ep_api->ReleaseHardwareDevice(factory->npu);
  delete factory;
  return nullptr;
}

// Counters since the library was loaded (fills up to `count`, returns how many there are): nodes claimed, nodes
// refused, fused graphs compiled from ONNX, fused graph runs, nodes run, busy ns, modelled ns, EPContext blobs
// written, EPContext blobs loaded, modelled compile ns. New counters go at the end, so older readers keep working.
VNPU_EXPORT size_t TandemVirtualNpu_Stats(uint64_t* out, size_t count) {
  const uint64_t values[] = {g_nodes_claimed.load(),         g_nodes_refused.load(),        g_graphs_compiled.load(),
                             g_graph_runs.load(),            g_nodes_run.load(),            g_busy_ns.load(),
                             g_modelled_ns.load(),           g_context_blobs_written.load(), g_context_blobs_loaded.load(),
                             g_modelled_compile_ns.load()};
  const size_t total = sizeof(values) / sizeof(values[0]);
  for (size_t i = 0; i < count && i < total; i++) out[i] = values[i];
  return total;
}

// The reason the device last refused a node ("refused node \"x\" (Op): dynamic shape"), NUL-terminated.
VNPU_EXPORT size_t TandemVirtualNpu_LastRefusal(char* out, size_t size) {
  std::lock_guard<std::mutex> lock(g_refusal_mutex);
  if (out && size) {
    size_t n = g_last_refusal.size() < size - 1 ? g_last_refusal.size() : size - 1;
    std::memcpy(out, g_last_refusal.data(), n);
    out[n] = '\0';
  }
  return g_last_refusal.size();
}
