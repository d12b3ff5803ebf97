"""The phases of a compile, named once: ``c.timings``, the compile-time report's categories and the progress
steps of a compile all speak of these.

Torch times a compile with nested timers (``dynamo_timed``): a frame's compile holds the backend compile,
which holds AOTAutograd, which calls Inductor, which lowers, schedules, generates code and builds kernels.
So a phase says two things about where its time is:

- ``inside``: the phase whose figure in ``c.timings`` runs around this one's. ``c.timings`` holds torch's
  timers as they are, so its figures overlap along these links and do not add up (and inside some phases
  too: on a CPU, codegen's timer holds the C++ kernel builds; ``async_compile.wait`` runs inside
  ``PyCodeCache.load_by_key_path``);
- ``flat``: whether the phase is a category of the flat breakdown (``c.compile_time.categories()``), where
  every second of the compile is in exactly one category. A phase that is only a nested timer
  (``backend``, ``joint_graph``) counts in its ``part_of`` there.

``timers`` name torch's timers each phase stands for: exact names, ``prefix*``, ``*suffix`` or
``*part*``; the report puts an event in the phase of the first exact name that matches, else the first
prefix, suffix, then part (``category_of``). ``hooks`` name the explorer's own intervals (what a capture
times of itself, not torch) each phase stands for; an interval no phase names is the explorer's
(``hook_category``). ``aliases`` are the other words the same phase goes by in
saved traces and progress steps (``tracing``, ``compile``, ``kernel compile``, ``collecting``).
"""

from __future__ import annotations

from dataclasses import dataclass

# the explorer's own intervals that are phases of their own (compiler/pipeline/recording/compile_time.py keeps them)
STARTING = "starting the capture"  # from the call to torch.compile: imports, settings, the cache store opened
READING_STORE = "reading the store"  # a served graph's stored stages read
LOADING_SERVED = "loading served stages"  # a served graph's stages made model objects, live parts attached
RETRACING = "tracing the post-grad graph again"  # a served graph's post-grad GraphModule made again, when first read


@dataclass(frozen=True)
class CompilePhase:
    name: str  # the key in c.timings, the report's category, the progress stage
    label: str  # how a person reads it
    what: str  # one sentence: what runs in it
    timers: tuple[str, ...] = ()  # torch's timers (dynamo_timed names) it stands for
    inside: str | None = None  # the phase whose torch timer holds this one's
    flat: bool = True  # a category of c.compile_time.categories()
    part_of: str | None = None  # for a phase that is not flat: the category its time counts in
    aliases: tuple[str, ...] = ()
    hooks: tuple[str, ...] = ()  # the explorer's own intervals it stands for


PHASES: tuple[CompilePhase, ...] = (
    CompilePhase("total", "total", "the whole call that compiled: compiling, running the compiled code once and "
                 "the explorer's own work", flat=False),
    CompilePhase("startup", "starting", "before torch.compile runs: torch's compiler imported (the first capture "
                 "of a process pays it), the settings checked and the explorer's cache store opened", inside="total",
                 hooks=(STARTING,)),
    # c.timings' dynamo is bytecode_tracing alone, which ends before the backend compile starts
    CompilePhase("dynamo", "Dynamo", "Dynamo tracing the bytecode into graphs and building their guards",
                 ("dynamo", "entire_frame_compile", "bytecode_tracing", "build_guards", "gc",
                  "insert_deferred_runtime_asserts", "compile_attempt_*", "bytecode_hooks_*"),
                 inside="total", aliases=("tracing",)),
    CompilePhase("backend", "backend compile", "the backend (AOTAutograd and Inductor) compiling one Dynamo graph, "
                 "once Dynamo has traced it", ("backend_compile",), inside="total", flat=False, part_of="dynamo"),
    CompilePhase("pre_grad", "pre-grad passes", "graph passes on the Dynamo graph before autograd",
                 ("_recursive_pre_grad_passes", "pass.pre_grad_passes.*"), inside="backend"),
    CompilePhase("aot", "AOTAutograd", "AOTAutograd tracing the joint forward-backward graph and partitioning it",
                 ("create_aot_dispatcher_function", "aot_collect_metadata", "aot_trace_joint_graph",
                  "min_cut_rematerialization_partition", "compile_fx.<locals>.fw_compiler_base",
                  "compile_fx.<locals>.bw_compiler", "entire_backward_compile"), inside="backend"),
    CompilePhase("joint_graph", "joint-graph passes", "graph passes on AOTAutograd's joint graph",
                 ("_recursive_joint_graph_passes", "pass.joint_graph_passes.*"), inside="aot", flat=False,
                 part_of="aot"),
    CompilePhase("inductor", "Inductor", "Inductor compiling one forward or backward graph",
                 ("inductor_compile", "fx_codegen_and_compile"), inside="backend"),
    CompilePhase("post_grad", "post-grad passes", "graph passes on the forward and backward graphs",
                 ("_recursive_post_grad_passes", "additional_fake_tensor_prop", "pass.post_grad_passes.*"),
                 inside="inductor"),
    CompilePhase("lowering", "lowering", "FX nodes lowered to Inductor's loop IR (max-autotune tunes templates here)",
                 ("GraphLowering.run",), inside="inductor"),
    CompilePhase("scheduling", "scheduling", "the scheduler ordering and fusing loop-IR nodes", ("Scheduler.*",),
                 inside="inductor"),
    CompilePhase("codegen", "codegen", "kernels and the wrapper generated as source (on a CPU, torch's timer also "
                 "holds the C++ kernel builds)",
                 ("GraphLowering.compile_to_fn", "code_gen", "GraphLowering.codegen", "GraphLowering.codegen_subgraph",
                  "Scheduler.codegen", "generate_kernel_code_from_nodes"), inside="inductor"),
    CompilePhase("wrapper", "wrapper", "the wrapper (the code that calls the kernels) generated",
                 ("PythonWrapperCodegen.generate", "CppWrapperCpu.generate", "CppWrapperGpu.generate"), inside="codegen"),
    CompilePhase("kernel_compile", "kernel compile", "generated kernels built (Triton, C++) and loaded",
                 ("compile_file", "PyCodeCache.load_by_key_path", "async_compile.wait",
                  "CachingAutotuner.slow_precompile_config", "async_compile.*"),
                 inside="inductor", aliases=("compile", "kernel compile")),
    CompilePhase("autotune", "autotuning", "choices and kernel configs benchmarked to pick the fastest",
                 ("benchmark_codegened_module", "collective_compute_do_bench", "CachingAutotuner.*",
                  "*_template_autotuning", "*_template_precompiling"), inside="inductor", aliases=("autotuning",)),
    CompilePhase("cache", "caches", "Inductor's and AOTAutograd's caches looked up and written",
                 ("TritonBundler.*", "*cache*"), inside="backend"),
    CompilePhase("served", "served by a warm capture", "a warm capture's own work for the graphs a cache served: "
                 "their stages read from the explorer's store and loaded, and their post-grad GraphModule traced "
                 "again when first read", inside="total", hooks=(READING_STORE, LOADING_SERVED, RETRACING)),
    CompilePhase("run", "running", "the compiled code run (after a graph break, Dynamo traces on)", inside="total",
                 flat=False, part_of="other"),
    CompilePhase("backward", "backward", "the backward graph compiled, on the first backward call", inside="total",
                 flat=False),
    CompilePhase("explorer", "the explorer", "the explorer's own work: its hooks inside torch, collecting the stages",
                 inside="total", aliases=("collecting",)),
    CompilePhase("other", "other", "what no torch timer covers", inside="total"),
)

_BY_WORD = {word: phase for phase in PHASES for word in (phase.name, *phase.aliases)}

# the report's categories, in the order a compile runs through them
CATEGORIES: tuple[str, ...] = tuple(p.name for p in PHASES if p.flat)

# a compile's progress stages, in the order they come (a display turns the place into a bar)
COMPILE_STAGES: tuple[str, ...] = ("dynamo", "aot", "lowering", "scheduling", "codegen", "kernel_compile", "run",
                                   "backward", "explorer")


def find(word: str) -> CompilePhase | None:
    """The phase a name or alias stands for (``tracing`` -> dynamo), or None."""
    return _BY_WORD.get(word)


def canonical(word: str) -> str:
    """The phase's own name for ``word``; a word that is no phase stays as it is."""
    phase = _BY_WORD.get(word)
    return phase.name if phase is not None else word


def stage_place(stage: str) -> int | None:
    """Where a progress stage comes among COMPILE_STAGES (aliases too), or None."""
    name = canonical(stage)
    return COMPILE_STAGES.index(name) if name in COMPILE_STAGES else None


def _category_by_kind() -> tuple[dict[str, str], list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    exact: dict[str, str] = {}
    prefixes: list[tuple[str, str]] = []
    suffixes: list[tuple[str, str]] = []
    parts: list[tuple[str, str]] = []
    for phase in PHASES:
        category = phase.name if phase.flat else phase.part_of
        if category is None:
            continue
        for timer in phase.timers:
            if timer.startswith("*") and timer.endswith("*"):
                parts.append((timer[1:-1], category))
            elif timer.endswith("*"):
                prefixes.append((timer[:-1], category))
            elif timer.startswith("*"):
                suffixes.append((timer[1:], category))
            else:
                exact[timer] = category
    return exact, prefixes, suffixes, parts


_EXACT, _PREFIXES, _SUFFIXES, _PARTS = _category_by_kind()


_HOOKS = {hook: phase.name for phase in PHASES for hook in phase.hooks}


def hook_category(hook: str) -> str:
    """The report category of one of the explorer's own intervals: its phase's, else ``explorer``."""
    return _HOOKS.get(hook, "explorer")


def category_of(timer: str) -> str | None:
    """The report category of one of torch's timers (None: it takes its parent's)."""
    if timer in _EXACT:
        return _EXACT[timer]
    for prefix, category in _PREFIXES:
        if timer.startswith(prefix):
            return category
    for suffix, category in _SUFFIXES:
        if timer.endswith(suffix):
            return category
    for part, category in _PARTS:
        if part in timer.lower():
            return category
    return None
