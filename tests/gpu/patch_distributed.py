"""A myns-patched Llama trained data-parallel (DDP or FSDP2) on two ranks must
give the loss of the same model trained in one process on the whole batch.

    torchrun --nproc-per-node 2 tests/gpu/patch_distributed.py --mode ddp   --device cuda
    torchrun --nproc-per-node 2 tests/gpu/patch_distributed.py --mode fsdp2 --device cpu   # gloo

Each rank takes half of each batch (equal token counts, no ignored labels,
so the mean of the ranks' mean losses is the whole batch's mean loss), DDP
and FSDP2 average the gradients, and after each SGD step the parameters
must match the single-process model's. Rank 0 prints ``patch-distributed
ok`` with the largest loss difference, which must stay within float32
roundoff of a sum over the batch.
"""

import argparse
import copy
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python_loader"))
import myns  # noqa: E402


def tiny_llama(device):
    import transformers

    cfg = transformers.LlamaConfig(vocab_size=97, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                                   attn_implementation="eager")
    torch.manual_seed(0)
    return myns.patch(transformers.LlamaForCausalLM(cfg).to(device))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["ddp", "fsdp2"], default="ddp")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cuda")
    p.add_argument("--steps", type=int, default=3)
    args = p.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if args.device == "cuda":
        torch.cuda.set_device(rank)
        device = torch.device("cuda", rank)
    else:
        device = torch.device("cpu")
    dist.init_process_group("nccl" if args.device == "cuda" else "gloo")

    single = tiny_llama(device)
    model = copy.deepcopy(single)
    if args.mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        wrapped = DistributedDataParallel(model, device_ids=[rank] if args.device == "cuda" else None)
    else:
        from torch.distributed.fsdp import fully_shard

        for layer in model.model.layers:
            fully_shard(layer)
        wrapped = fully_shard(model)
    opt = torch.optim.SGD(wrapped.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(single.parameters(), lr=0.1)

    g = torch.Generator().manual_seed(1)
    worst = 0.0
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
        ref_opt.step()
        ref_opt.zero_grad()
        diff = abs(float(mean) - float(ref.detach()))
        worst = max(worst, diff)
        # float32 sums over 2 * world * 16 tokens of losses near log(97) = 4.6.
        bound = 16 * 2.0**-24 * float(ref) * 2 * world * 16
        if diff > bound:
            raise SystemExit(f"rank {rank} step {step}: {args.mode} loss {float(mean):.7f} vs one process "
                             f"{float(ref):.7f} (|diff| {diff:.3g} > {bound:.3g})")
    if rank == 0:
        print(f"patch-distributed ok: {args.mode} on {world} x {args.device}, {args.steps} steps, "
              f"largest |loss - single-process loss| {worst:.3g}")
    # Every rank done before any tears down: a rank still in gloo when its
    # peer has closed the connection aborts (seen once in CI, SIGABRT after
    # the ok line).
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
