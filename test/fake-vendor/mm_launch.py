"""Makes aten::mm launch a fake vendor library's GEMM, as a device backend's mm kernel launches its kernel, for the
fake workloads: the op that owns the kernel is then aten::mm, the one the parity checks read (P4, K6), and not the
record_function range around it. torch's CPU mm is replaced for the calling process only; the product is
computed by bmm.
"""
import warnings


def launch_gemm_inside_mm(torch, launch, capture=None):
    """`launch()` runs inside every aten::mm; with `capture`, the n-th is bracketed by push_correlation(2 n) and
    pop_correlation() (0 first: a valid torch id). Keep the returned library alive for as long as mm should launch."""
    count = [0]

    def mm(x, y):
        if capture is not None:
            capture.push_correlation(count[0] * 2)
        launch()
        if capture is not None:
            capture.pop_correlation()
        count[0] += 1
        return torch.bmm(x.unsqueeze(0), y.unsqueeze(0)).squeeze(0)

    library = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "overriding a previously registered kernel"
        library.impl("mm", mm, "CPU")
    return library
