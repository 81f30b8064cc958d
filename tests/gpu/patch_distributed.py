"""A myns-patched Llama trained data-parallel (DDP or FSDP2) on two ranks must
give the loss of the same model trained in one process on the whole batch.

    torchrun --nproc-per-node 2 tests/gpu/patch_distributed.py --mode ddp   --device cuda
    torchrun --nproc-per-node 2 tests/gpu/patch_distributed.py --mode fsdp2 --device cpu   # gloo

Each rank takes half of each batch (equal token counts, no ignored labels,
so the mean of the ranks' mean losses is the whole batch's mean loss), DDP
and FSDP2 average the gradients, and after each SGD step every parameter
must match the single-process model's (FSDP2's shards gathered) to within
1e-3 of the updates made so far: float32 roundoff is some 1e-6 of them,
while a gradient not averaged over the ranks, or a rank left out, moves a
parameter by half an update or more. The loss must stay within float32
roundoff of a sum over the batch. Rank 0 prints ``patch-distributed ok``
with the largest differences.
"""

import argparse
import copy
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python_loader"))
import myns  # noqa: E402


def tiny_llama(device, recompute_mlp=False):
    import transformers

    cfg = transformers.LlamaConfig(vocab_size=97, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                                   attn_implementation="eager")
    torch.manual_seed(0)
    return myns.patch(transformers.LlamaForCausalLM(cfg).to(device), recompute_mlp=recompute_mlp)


def check_params(model, single, moved, mode, rank, step):
    """Every parameter of the data-parallel model against the one-process
    model's, within 1e-3 of the updates so far (plus the parameter's own
    rounding); returns the largest difference as a fraction of the updates.
    Collective under FSDP2 (the shards are gathered): every rank calls it."""
    worst = 0.0
    for (name, p), (ref_name, r) in zip(model.named_parameters(), single.named_parameters()):
        assert name == ref_name, (name, ref_name)
        full = p.full_tensor() if mode == "fsdp2" else p
        diff = float((full.detach() - r.detach()).abs().max())
        scale = moved[name] + 8 * 2.0**-24 * float(r.detach().abs().max())
        if diff > 1e-3 * scale:
            raise SystemExit(f"rank {rank} step {step}: {mode} parameter {name} differs from one process's by "
                             f"{diff:.3g}, more than 1e-3 of its updates so far ({moved[name]:.3g})")
        worst = max(worst, diff / scale if scale else 0.0)
    return worst


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["ddp", "fsdp2"], default="ddp")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cuda")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--recompute-mlp", action="store_true", help="myns.patch(model, recompute_mlp=True)")
    args = p.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if args.device == "cuda":
        torch.cuda.set_device(rank)
        device = torch.device("cuda", rank)
    else:
        device = torch.device("cpu")
    dist.init_process_group("nccl" if args.device == "cuda" else "gloo")

    single = tiny_llama(device, args.recompute_mlp)
    model = copy.deepcopy(single)
    if args.mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        wrapped = DistributedDataParallel(model, device_ids=[rank] if args.device == "cuda" else None)
    else:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        # An explicit mesh: fully_shard's default one takes CUDA's device
        # type whenever CUDA is there, also for CPU ranks (on a GPU machine
        # rank 1 then failed with an invalid device ordinal on one GPU and
        # both crashed on two).
        mesh = init_device_mesh(args.device, (world,))
        for layer in model.model.layers:
            fully_shard(layer, mesh=mesh)
        wrapped = fully_shard(model, mesh=mesh)
    opt = torch.optim.SGD(wrapped.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(single.parameters(), lr=0.1)

    g = torch.Generator().manual_seed(1)
    worst, worst_param = 0.0, 0.0
    moved = {name: 0.0 for name, _ in single.named_parameters()}  # sum of each tensor's largest update
    for step in range(args.steps):
        ids = torch.randint(0, 97, (2 * world, 16), generator=g).to(device)
        mine = ids[rank * 2 : (rank + 1) * 2]
        loss = wrapped(input_ids=mine, labels=mine).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        mean /= world
        ref = single(input_ids=ids, labels=ids).loss
        ref.backward()
        for name, p in single.named_parameters():
            moved[name] += 0.1 * float(p.grad.abs().max())
        ref_opt.step()
        ref_opt.zero_grad()
        worst_param = max(worst_param, check_params(model, single, moved, args.mode, rank, step))
        diff = abs(float(mean) - float(ref.detach()))
        worst = max(worst, diff)
        # float32 sums over 2 * world * 16 tokens of losses near log(97) = 4.6.
        bound = 16 * 2.0**-24 * float(ref.detach()) * 2 * world * 16
        if diff > bound:
            raise SystemExit(f"rank {rank} step {step}: {args.mode} loss {float(mean):.7f} vs one process "
                             f"{float(ref):.7f} (|diff| {diff:.3g} > {bound:.3g})")
    if rank == 0:
        print(f"patch-distributed ok: {args.mode} on {world} x {args.device}, {args.steps} steps, "
              f"largest |loss - single-process loss| {worst:.3g}, largest parameter difference "
              f"{worst_param:.3g} of the updates")
    # Every rank done before any tears down: a rank still in gloo when its
    # peer has closed the connection aborts (seen once in CI, SIGABRT after
    # the ok line).
    dist.barrier()
    dist.destroy_process_group()
    # Past this point only interpreter teardown is left. With the patched
    # model under FSDP2 on gloo CPU ranks, about one run in seven aborts
    # there ("terminate called without an active exception", SIGABRT after
    # the ok line; not seen with the unpatched model, and not yet explained):
    # leave without static destructors so the check above decides the exit
    # status. The abort itself is an open problem (the closing note of
    # 2026-11-26 has the repro).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
