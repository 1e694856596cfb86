"""A first look at a gradient tape: record, print, differentiate, replay.

Run: python examples/first_gradient.py
"""

import autodiff as ad

x = ad.Variable(3.0, name="x")

with ad.GradientTape() as tape:
    y = x * x          # recorded: reads the watched variable x
    z = ad.sin(y)      # recorded: reads y, which is now watched too

print("What the tape recorded:")
print(tape)
print()

names = tape.names()   # the printout's names: tensor id -> 'x', 'v0', ...
trace = tape.backward_trace(z, x)
print("The backward pass, one VJP at a time:")
for step in trace.steps:
    g = step.cotangents[0].numpy()
    sent = ", ".join(f"{names[i]} += {c.numpy():.4f}"
                     for i, c in step.contributions if c is not None)
    print(f"  {step.op_type:>4}: cotangent {g:.4f} arrives; sends {sent}")
print()
print("dz/dx =", trace.gradients, " (2 x cos(x^2) =", float(2 * 3.0 * ad.cos(9.0)), ")")
