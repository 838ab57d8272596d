// "flagos": a PrivateUse1 backend for tests, in the manner of PyTorch's OpenReg. Its memory is host memory and its
// math is the CPU kernels run on that same memory; what makes it a device is that every op then launches its
// device work through the flagos runtime, which drives a fake vendor activity library. Profilers thus see kernels,
// copies and fills with realistic names and durations on a machine without an accelerator.
#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/record_function.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/ApproximateClock.h>
#include <torch/csrc/profiler/stubs/base.h>
#include <torch/library.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "flagos_runtime.h"

#ifdef FLAGOS_BACKEND_WITH_ADAPTOR
#include "kineto/flagos_kineto_profiler.h"
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>
#endif

namespace flagos {
namespace {

constexpr c10::DeviceType kFlagos = c10::DeviceType::PrivateUse1;
constexpr c10::StreamId kDefaultStream = 7;  // the stream the fake vendor libraries put their records on

c10::Device flagos_device() { return c10::Device(kFlagos, 0); }

// ---- memory ----

void free_device_memory(void* ptr) { std::free(ptr); }

struct FlagosAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    void* ptr = nullptr;
    if (nbytes > 0) {
      // 64-byte alignment, as device allocators give at least, keeps the CPU kernels' vector paths usable.
      ptr = std::aligned_alloc(64, (nbytes + 63) / 64 * 64);
      TORCH_CHECK(ptr, "flagos: out of memory allocating ", nbytes, " bytes");
    }
    return {ptr, ptr, &free_device_memory, flagos_device()};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &free_device_memory; }
  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }
};

FlagosAllocator allocator;
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &allocator);

// ---- device, stream and hooks ----

struct FlagosGuardImpl final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kFlagos; }
  c10::Device exchangeDevice(c10::Device) const override { return flagos_device(); }
  c10::Device getDevice() const override { return flagos_device(); }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kFlagos && (!d.has_index() || d.index() == 0), "flagos has one device (flagos:0), not ", d);
  }
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::UNSAFE, c10::Device(kFlagos, d.has_index() ? d.index() : 0), kDefaultStream);
  }
  c10::Stream getDefaultStream(c10::Device d) const override { return getStream(d); }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool) const override { return getStream(d); }
  c10::Stream getNewStream(c10::Device d, int) const override { return getStream(d); }
  c10::Stream exchangeStream(c10::Stream) const override { return getStream(flagos_device()); }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }
  // One in-order stream: an event is complete once the device is idle, so events carry no state.
  void record(void** event, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {
    if (event && !*event) *event = reinterpret_cast<void*>(kDefaultStream);
  }
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream&) const override { runtime_synchronize(); }
  void synchronizeEvent(void*) const override { runtime_synchronize(); }
  void synchronizeDevice(const c10::DeviceIndex) const override { runtime_synchronize(); }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, FlagosGuardImpl);

struct FlagosHooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  c10::DeviceIndex deviceCount() const override { return 1; }
  c10::DeviceIndex getCurrentDevice() const override { return 0; }
  void setCurrentDevice(c10::DeviceIndex) const override {}
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex) const override { return 0; }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex) const override { return 0; }
  // Random numbers come from the CPU kernels, so the CPU generator is the device's.
  const at::Generator& getDefaultGenerator(c10::DeviceIndex) const override {
    return at::detail::getDefaultCPUGenerator();
  }
  at::Device getDeviceFromPtr(void*) const override { return flagos_device(); }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    at::DataPtr data = allocator.allocate(newsize);
    size_t keep = std::min<size_t>(storage.nbytes(), newsize);
    if (keep > 0) std::memcpy(data.get(), storage.data(), keep);
    storage.unsafeGetStorageImpl()->set_data_ptr_noswap(std::move(data));
    storage.unsafeGetStorageImpl()->set_nbytes(newsize);
  }
};

const bool hooks_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new FlagosHooks());
  return true;
}();

// ---- kernel names and durations ----

// Itanium-mangled names of the shapes CUDA builds of PyTorch launch; every one demangles.
std::string cutlass_gemm(const std::string& config) {
  return "_ZN7cutlass6KernelI" + std::to_string(config.size()) + config + "EEvNT_6ParamsE";
}

std::string elementwise(const std::string& functor, char scalar, int operands) {
  return "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_" + std::to_string(functor.size()) + functor + "I" +
         scalar + "EENS_6detail5ArrayIPcLi" + std::to_string(operands) + "EEEEEviT0_T1_";
}

std::string reduction(const std::string& ops, char scalar) {
  std::string s(1, scalar);
  return "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpI" + s + "NS0_" + std::to_string(ops.size()) + ops +
         "I" + s + s + "EEj" + s + "Li4EEEEEvT1_";
}

char scalar_code(at::ScalarType t) {
  switch (t) {
    case at::kDouble: return 'd';
    case at::kLong: return 'l';
    case at::kInt: return 'i';
    case at::kBool: return 'b';
    default: return 'f';
  }
}

std::string camel_case(std::string op) {
  // aten::threshold_backward -> ThresholdBackward
  if (op.rfind("aten::", 0) == 0) op = op.substr(6);
  std::string out;
  bool upper = true;
  for (char c : op) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out.empty() ? std::string("Elementwise") : out;
}

// Kernel specs live as long as the process: the fake CUPTI library keeps the name pointer, as CUDA does.
const KernelSpec& kernel_spec(const std::string& mangled, const char* aclnn_api, const char* ascend_type) {
  struct Owned {
    std::string mangled, api, type;
    KernelSpec spec;
  };
  static std::mutex lock;
  static std::map<std::string, std::unique_ptr<Owned>> specs;
  std::lock_guard<std::mutex> guard(lock);
  std::string key = mangled + '\n' + aclnn_api + '\n' + ascend_type;
  auto& slot = specs[key];
  if (!slot) {
    slot = std::make_unique<Owned>();
    slot->mangled = mangled;
    slot->api = aclnn_api;
    slot->type = ascend_type;
    slot->spec = {slot->mangled.c_str(), slot->api.c_str(), slot->type.c_str()};
  }
  return slot->spec;
}

// A modelled device: 4 TFLOP/s on GEMMs, 1 TB/s for memory-bound kernels, and a fixed cost per kernel.
uint64_t gemm_ns(int64_t m, int64_t n, int64_t k) { return 2000 + static_cast<uint64_t>(2 * m * n * k) / 4000; }
uint64_t memory_bound_ns(uint64_t bytes) { return 1000 + bytes / 1000; }

int blocks_for(int64_t elements, int per_block) {
  return static_cast<int>(std::max<int64_t>(1, (elements + per_block - 1) / per_block));
}

void launch_gemm(const char* config, const char* aclnn_api, int64_t m, int64_t n, int64_t k) {
  const KernelSpec& spec = kernel_spec(cutlass_gemm(config), aclnn_api, "KERNEL_AICORE");
  runtime_launch_kernel(spec, blocks_for(m, 128) * blocks_for(n, 128), 256, gemm_ns(m, n, k));
}

void launch_elementwise(const std::string& functor, const std::string& aclnn_api, at::ScalarType scalar,
                        int64_t elements, uint64_t bytes, int operands) {
  const KernelSpec& spec =
      kernel_spec(elementwise(functor, scalar_code(scalar), operands), aclnn_api.c_str(), "KERNEL_AIVEC");
  runtime_launch_kernel(spec, blocks_for(elements, 512), 128, memory_bound_ns(bytes));
}

void launch_elementwise(const std::string& functor, const std::string& aclnn_api, const at::Tensor& out,
                        uint64_t bytes, int operands) {
  launch_elementwise(functor, aclnn_api, out.scalar_type(), out.numel(), bytes, operands);
}

void launch_reduction(const at::Tensor& in, const char* aclnn_api) {
  const KernelSpec& spec = kernel_spec(reduction("SumOps", scalar_code(in.scalar_type())), aclnn_api, "KERNEL_AIVEC");
  runtime_launch_kernel(spec, blocks_for(in.numel(), 4096), 512, memory_bound_ns(in.nbytes()));
}

// ---- host views ----

bool on_flagos(const at::Tensor& t) { return t.defined() && t.device().type() == kFlagos; }

// The same memory seen as a CPU tensor, for the CPU kernel to work on.
at::Tensor host_view(const at::Tensor& t) {
  if (!on_flagos(t)) return t;
  return at::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.options().device(at::kCPU));
}

at::Tensor empty_flagos_like(const at::Tensor& cpu) {
  return at::detail::empty_strided_generic(cpu.sizes(), cpu.strides(), &allocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                           cpu.scalar_type());
}

// The CPU kernels that do a device op's math are how it is computed, not ops the user ran: profilers must not see
// them (each kernel below holds this while it computes).
using HostMath = at::DisableRecordFunctionGuard;

// A fresh CPU result moved into device memory (the kernel wrote it there; the host copy is how we compute).
at::Tensor to_flagos(const at::Tensor& cpu) {
  at::Tensor out = empty_flagos_like(cpu);
  host_view(out).copy_(cpu);
  return out;
}

// ---- kernels ----

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout> layout, std::optional<at::Device> device,
                               std::optional<bool> pin_memory, std::optional<at::MemoryFormat> memory_format) {
  return at::detail::empty_generic(size, &allocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout> layout, std::optional<at::Device> device,
                         std::optional<bool> pin_memory) {
  return at::detail::empty_strided_generic(size, stride, &allocator,
                                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                           c10::dtype_or_default(dtype));
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  HostMath host_math;
  CopyKind kind = on_flagos(self) && on_flagos(dst) ? CopyKind::DeviceToDevice
                  : on_flagos(dst)                  ? CopyKind::HostToDevice
                                                    : CopyKind::DeviceToHost;
  TORCH_CHECK(on_flagos(self) || self.device().is_cpu(), "flagos copies to and from the CPU only, not ", self.device());
  TORCH_CHECK(on_flagos(dst) || dst.device().is_cpu(), "flagos copies to and from the CPU only, not ", dst.device());
  host_view(dst).copy_(host_view(self), non_blocking);
  if (dst.numel() > 0) runtime_memcpy(dst.nbytes(), kind);
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (!dst.sizes().equals(self.sizes())) dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value) {
  HostMath host_math;
  host_view(self).fill_(value);
  if (self.numel() == 0) return self;
  // A zero fill is a memset on every vendor runtime; other values need a fill kernel.
  if (value.equal(0)) {
    runtime_memset(self.nbytes(), 0);
  } else {
    launch_elementwise("FillFunctor", "aclnnInplaceFillScalar", self, self.nbytes(), 1);
  }
  return self;
}

at::Tensor& zero(at::Tensor& self) { return fill_scalar(self, 0); }

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  HostMath host_math;
  at::Tensor out = to_flagos(at::mm(host_view(self), host_view(mat2)));
  launch_gemm("cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4", "aclnnMatmul", self.size(0), mat2.size(1),
              self.size(1));
  return out;
}

at::Tensor addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2, const at::Scalar& beta,
                 const at::Scalar& alpha) {
  HostMath host_math;
  at::Tensor out = to_flagos(at::addmm(host_view(self), host_view(mat1), host_view(mat2), beta, alpha));
  launch_gemm("cutlass_80_tensorop_s1688gemm_256x128_16x3_tn_align4", "aclnnAddmm", mat1.size(0), mat2.size(1),
              mat1.size(1));
  return out;
}

at::Tensor add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  HostMath host_math;
  at::Tensor out = to_flagos(at::add(host_view(self), host_view(other), alpha));
  launch_elementwise("CUDAFunctor_add", "aclnnAdd", out, self.nbytes() + other.nbytes() + out.nbytes(), 3);
  return out;
}

at::Tensor mul(const at::Tensor& self, const at::Tensor& other) {
  HostMath host_math;
  at::Tensor out = to_flagos(at::mul(host_view(self), host_view(other)));
  launch_elementwise("MulFunctor", "aclnnMul", out, self.nbytes() + other.nbytes() + out.nbytes(), 3);
  return out;
}

at::Tensor relu(const at::Tensor& self) {
  HostMath host_math;
  at::Tensor out = to_flagos(at::relu(host_view(self)));
  launch_elementwise("ReluFunctor", "aclnnRelu", out, self.nbytes() + out.nbytes(), 2);
  return out;
}

at::Tensor sum(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  HostMath host_math;
  at::Tensor out = to_flagos(at::sum(host_view(self), dtype));
  launch_reduction(self, "aclnnReduceSum");
  return out;
}

at::Tensor sum_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<at::ScalarType> dtype) {
  HostMath host_math;
  at::Tensor out = to_flagos(at::sum(host_view(self), dim, keepdim, dtype));
  launch_reduction(self, "aclnnReduceSum");
  return out;
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  HostMath host_math;
  // .item() reads one element back to the host.
  runtime_memcpy(self.element_size(), CopyKind::DeviceToHost);
  return at::_local_scalar_dense(host_view(self));
}

// Every other op: its CPU kernel on host views of the same memory. In-place and out= results are the device
// tensors they were given; views are device views; anything new is put in device memory.
class HostCall {
 public:
  HostCall(const c10::OperatorHandle& op, torch::jit::Stack* stack)
      : op_(op), schema_(op.schema()), stack_(*stack), num_args_(schema_.arguments().size()),
        device_args_(num_args_), host_args_(num_args_), is_out_(num_args_, false) {}

  void run() {
    HostMath host_math;
    arguments_to_host();
    op_.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &stack_);
    if (!touched_device_) return;
    out_arguments_to_device();
    results_to_device();
    launch();
  }

 private:
  void arguments_to_host() {
    const size_t begin = stack_.size() - num_args_;
    for (size_t i = 0; i < num_args_; i++) {
      c10::IValue& arg = stack_[begin + i];
      if (arg.isTensor() && on_flagos(arg.toTensor())) {
        const at::Tensor& t = arg.toTensor();
        device_args_[i] = t;
        // The CPU kernel may resize an out= tensor, which a host view cannot be: it writes a CPU tensor that is
        // then moved into the device one.
        is_out_[i] = schema_.arguments()[i].is_out();
        host_args_[i] = is_out_[i] ? at::empty({0}, t.options().device(at::kCPU)) : host_view(t);
        bytes_ += t.nbytes();
        touched_device_ = true;
        arg = host_args_[i];
      } else if (arg.isList()) {
        list_to_host(arg);
      } else if (arg.isDevice() && arg.toDevice().type() == kFlagos) {
        // A factory op: made on the CPU, then moved.
        touched_device_ = true;
        arg = c10::IValue(c10::Device(c10::kCPU));
      }
    }
  }

  void list_to_host(c10::IValue& arg) {
    c10::List<c10::IValue> list = arg.toList();
    c10::impl::GenericList host_list(list.elementType());
    bool changed = false;
    for (const c10::IValue& item : list) {
      if (item.isTensor() && on_flagos(item.toTensor())) {
        bytes_ += item.toTensor().nbytes();
        host_list.push_back(host_view(item.toTensor()));
        changed = true;
      } else {
        host_list.push_back(item);
      }
    }
    if (changed) {
      touched_device_ = true;
      arg = host_list;
    }
  }

  void out_arguments_to_device() {
    for (size_t i = 0; i < num_args_; i++) {
      if (!is_out_[i]) continue;
      if (!device_args_[i].sizes().equals(host_args_[i].sizes())) device_args_[i].resize_(host_args_[i].sizes());
      host_view(device_args_[i]).copy_(host_args_[i]);
    }
  }

  // The argument a result aliases (the same alias set in the schema), or -1.
  int64_t aliased_argument(const c10::AliasInfo* alias) const {
    if (!alias) return -1;
    for (size_t i = 0; i < num_args_; i++) {
      const c10::AliasInfo* a = schema_.arguments()[i].alias_info();
      if (a && device_args_[i].defined() && a->beforeSets() == alias->beforeSets()) return static_cast<int64_t>(i);
    }
    return -1;
  }

  at::Tensor result_to_device(const at::Tensor& cpu, const c10::AliasInfo* alias) const {
    int64_t source = aliased_argument(alias);
    if (source < 0) return to_flagos(cpu);
    const at::Tensor& base = device_args_[source];
    if (alias->isWrite()) return base;
    int64_t offset = (static_cast<char*>(cpu.data_ptr()) - static_cast<char*>(host_args_[source].data_ptr())) /
                         static_cast<int64_t>(cpu.element_size()) +
                     base.storage_offset();
    return at::native::as_strided_tensorimpl(base, cpu.sizes(), cpu.strides(), offset);
  }

  void results_to_device() {
    const size_t num_returns = schema_.returns().size();
    const size_t begin = stack_.size() - num_returns;
    for (size_t j = 0; j < num_returns; j++) {
      c10::IValue& ret = stack_[begin + j];
      if (ret.isTensor()) {
        const at::Tensor& cpu = ret.toTensor();
        if (!cpu.defined() || on_flagos(cpu)) continue;
        at::Tensor result = result_to_device(cpu, schema_.returns()[j].alias_info());
        bytes_ += result.nbytes();
        if (!first_result_.defined()) first_result_ = result;
        ret = result;
      } else if (ret.isTensorList()) {
        c10::List<at::Tensor> device_list;
        for (const at::Tensor& cpu : ret.toTensorList()) {
          device_list.push_back(on_flagos(cpu) || !cpu.defined() ? cpu : to_flagos(cpu));
          bytes_ += cpu.defined() ? cpu.nbytes() : 0;
        }
        ret = device_list;
      }
    }
  }

  void launch() const {
    if (bytes_ == 0) return;
    int operands = static_cast<int>(std::min<size_t>(3, std::max<size_t>(1, num_args_)));
    // Named as CUDA and Ascend name the kernel of an op: aten::threshold_backward launches a
    // ThresholdBackwardFunctor kernel through aclnnThresholdBackward.
    std::string op_name = camel_case(schema_.name());
    at::ScalarType scalar = first_result_.defined() ? first_result_.scalar_type() : at::kFloat;
    int64_t elements = first_result_.defined() ? first_result_.numel() : static_cast<int64_t>(bytes_ / 4);
    launch_elementwise(op_name + "Functor", "aclnn" + op_name, scalar, elements, bytes_, operands);
  }

  const c10::OperatorHandle& op_;
  const c10::FunctionSchema& schema_;
  torch::jit::Stack& stack_;
  const size_t num_args_;
  std::vector<at::Tensor> device_args_, host_args_;
  std::vector<bool> is_out_;
  at::Tensor first_result_;
  uint64_t bytes_ = 0;
  bool touched_device_ = false;
};

void compute_on_host(const c10::OperatorHandle& op, torch::jit::Stack* stack) { HostCall(op, stack).run(); }

// ---- the legacy profiler's device events (torch.autograd.profiler.profile(use_device="flagos")) ----

// An event is the device clock when it was recorded; two events' difference is the device time between them.
struct FlagosProfilerStubs final : torch::profiler::impl::ProfilerStubs {
  void record(c10::DeviceIndex* device, torch::profiler::impl::ProfilerVoidEventStub* event,
              int64_t* cpu_ns) const override {
    if (device) *device = 0;
    auto clock = std::make_shared<uint64_t>(runtime_device_clock_ns());
    *event = std::static_pointer_cast<void>(clock);
    if (cpu_ns) *cpu_ns = c10::getTime();
  }
  float elapsed(const torch::profiler::impl::ProfilerVoidEventStub* event,
                const torch::profiler::impl::ProfilerVoidEventStub* event2) const override {
    auto from = *static_cast<const uint64_t*>(event->get());
    auto to = *static_cast<const uint64_t*>(event2->get());
    // Microseconds, as the CUDA stubs return (event ms * 1000): the profiler reads this as privateuse1 elapsed us.
    return static_cast<float>(static_cast<double>(to - from) / 1e3);
  }
  void mark(const char*) const override {}
  void rangePush(const char*) const override {}
  void rangePop() const override {}
  bool enabled() const override { return true; }
  void onEachDevice(std::function<void(int)> op) const override { op(0); }
  void synchronize() const override { runtime_synchronize(); }
};

FlagosProfilerStubs profiler_stubs;
const bool stubs_registered = [] {
  torch::profiler::impl::registerPrivateUse1Methods(&profiler_stubs);
  return true;
}();

// ---- what Python asks of the backend (torch.ops.flagos.*) ----

std::string open_runtime() { return flagos::runtime_open(); }
std::string family() { return flagos::runtime_family(); }
void synchronize() { flagos::runtime_synchronize(); }
int64_t device_clock_ns() { return static_cast<int64_t>(flagos::runtime_device_clock_ns()); }
bool has_kineto_adaptor() {
#ifdef FLAGOS_BACKEND_WITH_ADAPTOR
  return true;
#else
  return false;
#endif
}

}  // namespace
}  // namespace flagos

#ifdef FLAGOS_BACKEND_WITH_ADAPTOR
using FlagosKinetoProfiler = flagprof::kineto::FlagosKinetoProfiler;
REGISTER_PRIVATEUSE1_PROFILER(FlagosKinetoProfiler);
#endif

TORCH_LIBRARY(flagos, m) {
  m.def("open_runtime() -> str", &flagos::open_runtime);
  m.def("family() -> str", &flagos::family);
  m.def("synchronize() -> ()", &flagos::synchronize);
  m.def("device_clock_ns() -> int", &flagos::device_clock_ns);
  m.def("has_kineto_adaptor() -> bool", &flagos::has_kineto_adaptor);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", &flagos::empty_memory_format);
  m.impl("empty_strided", &flagos::empty_strided);
  m.impl("_copy_from", &flagos::copy_from);
  m.impl("_copy_from_and_resize", &flagos::copy_from_and_resize);
  m.impl("fill_.Scalar", &flagos::fill_scalar);
  m.impl("zero_", &flagos::zero);
  m.impl("mm", &flagos::mm);
  m.impl("addmm", &flagos::addmm);
  m.impl("add.Tensor", &flagos::add);
  m.impl("mul.Tensor", &flagos::mul);
  m.impl("relu", &flagos::relu);
  m.impl("sum", &flagos::sum);
  m.impl("sum.dim_IntList", &flagos::sum_dim);
  m.impl("_local_scalar_dense", &flagos::local_scalar_dense);
  m.impl("view", &at::native::view);
  m.impl("as_strided", &at::native::as_strided_tensorimpl);
  m.impl("_reshape_alias", &at::native::_reshape_alias);
  m.impl("resize_", &at::native::resize_);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&flagos::compute_on_host>());
}
