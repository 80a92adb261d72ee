import type { AddResult, MaintenanceReport, MemoryRecord } from '@memloom/core';

const dim = (text: string) => (process.stdout.isTTY ? `\u001b[2m${text}\u001b[0m` : text);
const bold = (text: string) => (process.stdout.isTTY ? `\u001b[1m${text}\u001b[0m` : text);

export function heading(text: string): void {
  console.log(`\n${bold(text)}`);
}

export function printDecision(label: string, content: string, result: AddResult): void {
  const { decision } = result;
  console.log(`  ${label} ${JSON.stringify(content)}`);
  console.log(`    -> ${bold(decision.strategy)} (similarity ${decision.similarity.toFixed(3)}): ${decision.reason}`);
  if (decision.strategy === 'merge_update') console.log(`    -> memory now [${result.memory.level}] ${result.memory.content}`);
  if (result.boosted) console.log(`    -> nearest memory weight now ${result.boosted.weight.toFixed(3)} ${dim('(content, level, timestamp unchanged)')}`);
}

export function printReport(report: MaintenanceReport): void {
  console.log(
    `  maintain @ ${report.now.slice(0, 10)}: ${report.compressed} compressed, ${report.decayed} decayed, ${report.deleted} deleted, ${report.unchanged} unchanged`,
  );
  for (const change of report.changes) {
    const levels = change.fromLevel ? ` ${change.fromLevel} -> ${change.toLevel}` : '';
    console.log(`    ${change.action}${levels}: ${dim(change.reasons.join('; '))}`);
  }
}

export function printMemories(memories: MemoryRecord[]): void {
  for (const memory of memories) {
    console.log(
      `    [${memory.level.padEnd(7)}] w=${memory.weight.toFixed(3)} updated ${memory.updatedAt.slice(0, 10)}  ${memory.content}`,
    );
  }
}
