"""One DistributedDataParallel training step of a small model built from myns
ops on two GPUs must match the same step on one GPU with the whole batch.

    torchrun --nproc-per-node 2 tests/gpu/ddp_train.py
"""

import os

import torch
import torch.distributed as dist

import myns


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(32, 64) / 6)
        self.norm = torch.nn.Parameter(torch.ones(32))
        self.w2 = torch.nn.Parameter(torch.randn(32, 8) / 6)

    def forward(self, x):
        h = myns.rms_norm(x, self.norm, 1e-6)
        h = myns.silu_and_mul(myns.matmul(h, self.w1))
        return myns.softmax(myns.matmul(h, self.w2), -1)


def step(model, x, y):
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    opt.zero_grad()
    loss = (model(x) - y).square().sum() / x.shape[0]
    loss.backward()
    opt.step()
    return loss.detach()


def main():
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(rank)
    torch.manual_seed(0)
    ref = Net().cuda()
    net = Net().cuda()
    net.load_state_dict(ref.state_dict())
    model = torch.nn.parallel.DistributedDataParallel(net, device_ids=[rank])
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 32, generator=g).cuda()
    y = torch.softmax(torch.randn(16, 8, generator=g), -1).cuda()
    shard = slice(rank * 16 // world, (rank + 1) * 16 // world)
    step(model, x[shard], y[shard])  # DDP averages gradients over ranks
    step(ref, x, y)  # the whole batch on one GPU
    for (name, p), q in zip(model.module.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5, msg=f"{name} differs")
    dist.barrier()
    if rank == 0:
        print(f"ddp ok: {world} ranks match single-GPU step")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
