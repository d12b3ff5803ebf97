"""The recorders of a live capture, one per stage it records: what Dynamo handed over, the inner compiles
AOTAutograd made, lowering and scheduling, codegen, autotuning, CUDA graphs, the warm store and the compile's
time. ``compiler/pipeline/capture.py``'s recorder receives every hook call and routes it to one of them."""
