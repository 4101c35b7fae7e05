import { describe, expect, it } from "vitest";
import { destinations } from "../../src/destinations/registry.js";
import { contractRuns, destinationContract } from "./destination-contract.js";
import { contractTargets } from "./targets.js";

const targets: Record<string, (typeof contractTargets)[keyof typeof contractTargets] | undefined> =
  contractTargets;

for (const destination of destinations) {
  const target = targets[destination.slug];
  if (target) destinationContract(destination, target);
}

describe("registry coverage", () => {
  it("every registry entry has a fake and a contract run", () => {
    const slugs = destinations.map((d) => d.slug).sort();
    expect(Object.keys(targets).sort()).toEqual(slugs);
    expect([...contractRuns].sort()).toEqual(slugs);
  });
});
