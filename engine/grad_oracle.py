"""The oracle's reverse mode through long rollouts (the judge of the kernel's gradients): checkpoint every substep,
then chain one vector-Jacobian product per substep.

A lazy tinygrad graph of a 1 s rollout has S * 240 substeps; scheduling it takes far too long. Here the forward pass
stores the packed state before every substep (13 numbers per body per env per substep) and the backward pass runs,
from the last substep to the first, a jitted function that recomputes one substep and applies tinygrad's autograd
to it (`Tensor.gradient` with the incoming adjoint). Every gradient is tinygrad's own; only the chain rule across
substeps is written here. Model parameters are differentiated by name (fields of Model) and summed over substeps.

Speed (measured, double_pendulum, float64, CPU device): the forward substep is 9 kernels, its VJP 698, replayed in
6.8 ms through the CPU graph (engine/cpu_graph.py; 35 ms launching kernel by kernel), captured in ~17 s once per
model. Why so many kernels: tinygrad 0.14.0 (schedule/indexing.py, rangeify.py remove_bufferize)
materialises an intermediate whose consumers index it differently (here: the forward kernel and the backward's)
whenever it reads more than 3 buffers, and a joint's intermediates read the packed state, 2-3 model fields and cached
index masks. Tried: gathering each joint type's two sides, and all joint parameters, into one buffer each. That cut
the VJP to 22 kernels and 8 ms per substep (gradients equal within 8e-11) but doubled the capture to 100 s (ant: 1815
-> 527 kernels, 199 -> 355 s), a loss below ~1,000 substeps, so it is not in.

segmented=True differentiates a substep one stage at a time (_vjp_segmented): the same gradients from a graph per
stage (float64, 2026-11-29: box_bounce's impact within 1.2e-15 of the whole VJP; cradle's first substep within
6.5e-14; 2026-11-30, after a fix to its `keep`: bounce's impact within 5.1e-16, tests/test_parity_grad_contact.py).
Where the whole VJP's graph is large it is the one that fits: stack10's was killed at 22 GB on this 23 GB VM, while
its segmented references (tests/test_parity_grad.py SEGMENTED, 10 steps at batch 2) took 96 s at 0.83 GB in float64
and 138 s at 1.03 GB in float32. The whole VJP stays the default: the other golden references were computed
with it.
"""
from __future__ import annotations
from tinygrad import Tensor
from tinygrad.uop.ops import Ops
from engine.buffers import packed_of
from engine.stepping import Stepper, check_ctrl, check_ctrls, is_sequence, jit
from oracle.packed import unpack_state
from oracle.types import State


class RolloutGrad:
  """Jitted forward and per-substep VJP for one model, through the front door's Stepper (engine/stepping.py).
  wrt: names of Model tensor fields to differentiate. A model on the WEBGPU device goes through the WGSL kernel and
  its backward kernel instead (engine/grad_kernel.py KernelRolloutGrad), with the same methods.

  Contacts: the broadphase runs once per step in the forward and its pair table (discrete, not differentiated) is
  checkpointed with the step; each substep's VJP rebuilds the plan from it, so gradients reach the geom and body
  parameters the contacts use (friction, sizes, masses)."""

  def __init__(self, model, wrt: tuple[str, ...] = (), segmented: bool = False):
    for name in wrt:
      if not isinstance(getattr(model, name, None), Tensor):
        raise ValueError(f"wrt: {name!r} is not a Model tensor field")
    self.model, self.wrt = model, tuple(wrt)
    self.stepper = Stepper(model, differentiable=True)
    self._fwd = jit(lambda p, ctrl, *pairs: self.stepper.substep(p, ctrl, pairs).realize())
    self._vjp = jit(self._vjp_segmented if segmented else self._vjp_fn)

  def _inputs(self, packed: Tensor, ctrl: Tensor) -> list[Tensor]:
    """What a substep's VJP differentiates: the packed state, the controls (with actuators) and the wrt fields."""
    return [packed, *([ctrl] if self.model.nact else []), *(getattr(self.model, n) for n in self.wrt)]

  def _grads(self, grads: list[Tensor], ctrl: Tensor) -> tuple[Tensor, ...]:
    if not self.model.nact: grads = [grads[0], ctrl * 0.0, *grads[1:]]
    return tuple(g.realize() for g in grads)

  def _vjp_fn(self, packed: Tensor, ctrl: Tensor, adj: Tensor, *pairs):
    """(d/d packed, d/d ctrl, d/d each wrt parameter) of <adj, substep(packed, ctrl)>."""
    out = self.stepper.substep(packed, ctrl, pairs)
    return self._grads(out.gradient(*self._inputs(packed, ctrl), gradient=adj), ctrl)

  def _vjp_segmented(self, packed: Tensor, ctrl: Tensor, adj: Tensor, *pairs):
    """_vjp_fn's result, one stage at a time. tinygrad schedules the VJP of a whole substep as one graph, and for a
    scene with many contacts that takes more memory than a 23 GB machine has (stack10's: killed at 22 GB; the state's
    gradient alone 12 GB). Here the substep runs once with each tensor one stage hands the next (oracle/step.py's
    `cut`) realised; then, from the last stage to the first, it runs again with those values standing in, so that the
    stage's output is a small graph of the previous stages' values, differentiated and realised alone (stack10: under
    1 GB). The chain rule across the stages is written here; each stage's VJP is tinygrad's."""
    saved: list[Tensor] = []
    def keep(t: Tensor) -> Tensor:
      """Each stage's value realised into a buffer of its own. Not contiguous(): where a value is a view of one saved
      before it, that realises nothing and keeps the earlier buffer in its graph, so each stage's VJP reached that
      earlier value through both, doubling its share (bounce, one sphere and one contact slot: contact_side is
      pair_side's view; d/d body_inv_mass 2x the whole VJP's and float64 differences', found 2026-11-30)."""
      saved.append(t.clone().realize())
      return saved[-1]
    self.stepper.substep(packed, ctrl, pairs, cut=keep)

    def stage(k: int) -> Tensor:
      """Stage k's value (k == len(saved): the substep's output) as a graph of the saved values, built afresh: a
      realize swaps the intermediates it computes for buffers in every graph alive at the time, which would cut the
      paths from an earlier stage's graph to the parameters (the contact plan's rows, shared by the stages)."""
      lazy: list[Tensor] = []
      def stand_in(t: Tensor) -> Tensor:
        lazy.append(t)
        return saved[len(lazy) - 1]
      out = self.stepper.substep(packed, ctrl, pairs, cut=stand_in)
      return out if k == len(saved) else lazy[k]
    inputs = self._inputs(packed, ctrl)
    # adjoints of the saved values, then of the inputs; None: nothing reached it yet
    adjs: list[Tensor | None] = [None] * (len(saved) + len(inputs))
    for k in range(len(saved), -1, -1):
      a = adj if k == len(saved) else adjs[k]
      if a is None: continue   # a stage's value nothing downstream differentiates (a mask)
      wrt = [i for i in range(k) if saved[i].is_floating_point()] + [len(saved) + j for j in range(len(inputs))]
      grads = stage(k).gradient(*((saved + inputs)[i] for i in wrt), gradient=a)
      reached = [(i, g) for i, g in zip(wrt, grads) if g.uop.base.op is not Ops.CONST]   # CONST: y does not use it
      # one schedule per adjoint: tinygrad's memory grows faster than the graph it schedules (stack10's stages: 10 GB
      # and more with a stage's adjoints realised together, under 1 GB one by one)
      for i, g in reached: adjs[i] = (g if adjs[i] is None else adjs[i] + g).realize()
    total = adjs[len(saved):]
    return self._grads([t.zeros_like() if g is None else g for t, g in zip(inputs, total)], ctrl)

  def _ctrl(self, ctrl, batch: int, steps: int, device) -> list[Tensor]:
    """Per-step controls: None (zeros), one (B, nact) held throughout, or a (steps, B, nact) sequence."""
    n = max(self.model.nact, 1)   # a model without actuators takes a dummy (B, 1) zero input
    if ctrl is None or self.model.nact == 0:
      if ctrl is not None: check_ctrl(self.model, batch, ctrl, device)   # raises: no actuators
      return [Tensor.zeros(batch, n, dtype=self.model.body_pos0.dtype, device=device).contiguous().realize()] * steps
    # a fresh buffer per step (clone, not contiguous: that keeps a reshaped or sliced input's view), so every step's
    # control reaches the JITs in the same form whether it came as numpy, a list or a Tensor (a JIT refuses others)
    out = check_ctrls(self.model, batch, ctrl, steps, device)
    return [(out[t] if is_sequence(out) else out).clone().realize() for t in range(steps)]

  def forward(self, state: State, steps: int, ctrl=None) -> tuple[State, list[tuple]]:
    """Final state and the checkpoints: per substep, the packed state before it, the step's controls (and the step's
    pair table), each as its realised UOp (forward_packed says why). ctrl: None, one (B, nact) held for every step,
    or a sequence of `steps` of them."""
    packed, time, checkpoints = self.forward_packed(state, steps, ctrl)
    return unpack_state(packed, time, self.model), checkpoints

  def forward_packed(self, state: State, steps: int, ctrl=None) -> tuple[Tensor, Tensor, list[tuple]]:
    """forward's final state as it comes out of the steps, packed (B, NROWS, 13) and realised, its clock, and the
    checkpoints: rollout_grad differentiates the loss against the packed state, which it would otherwise pack again
    (3.5 ms of pendulum x64's 15.5 ms gradient on the kernel, lavapipe, 2026-11-30).
    Each substep's checkpoint keeps the realised buffers' UOps, not Tensors: every realize() walks the graph of every
    Tensor alive (tinygrad's _apply_map_to_tensors), so a Tensor per substep made each of the forward's and the
    backward's ~4 realises per substep slower as the checkpoints piled up, quadratic in the horizon. Pendulum in
    float64, 60 steps of 20 substeps (tests/test_grad_rollout.py): its gradient took 27.2 s, then 20.5 s on a second
    call, with Tensors; 16.4 and 8.2 s with UOps, the same numbers bit for bit. The chain in float64, compiled, 50,
    100 and 200 steps of 20 substeps: 13.3, 45.3 and 132.8 s with Tensors; 8.0, 11.0 and 24.3 s with UOps
    (2026-12-01)."""
    packed = packed_of(state, self.model)[0]
    controls = self._ctrl(ctrl, packed.shape[0], steps, packed.device)
    checkpoints = []
    for t in range(steps):
      pairs = self.stepper.pairs(packed)
      for _ in range(self.model.substeps):
        # the JIT reuses its output buffer: a copy of the state before each substep
        checkpoints.append((packed.clone().realize().uop, controls[t].uop, *(p.uop for p in pairs)))
        packed = self._fwd(packed, controls[t], *pairs)
    return packed.clone().realize(), (state.time + steps * self.model.dt).realize(), checkpoints

  def backward(self, checkpoints: list[tuple], adj_final: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
    """d loss / d (initial packed state) and d loss / d param for each wrt name, given d loss / d (final packed).
    The parameters' dict also holds "ctrl": d loss / d ctrl per step, (steps, B, nact) (for a model with actuators)."""
    adj = adj_final.clone().realize()
    totals, per_step, dctrl = {n: None for n in self.wrt}, [], None
    for k, (packed, ctrl, *pairs) in enumerate(reversed(checkpoints)):
      adj, gc, *gp = self._vjp(Tensor(packed), Tensor(ctrl), adj, *(Tensor(p) for p in pairs))
      adj = adj.clone().realize()
      dctrl = gc.clone().realize() if dctrl is None else (dctrl + gc).realize()
      if (k + 1) % self.model.substeps == 0: per_step.append(dctrl); dctrl = None
      for n, g in zip(self.wrt, gp):
        totals[n] = g.clone().realize() if totals[n] is None else (totals[n] + g).realize()
    if self.model.nact and per_step: totals["ctrl"] = Tensor.stack(*reversed(per_step)).realize()
    return adj, totals
