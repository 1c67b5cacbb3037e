// Toy tasks for watching attention heads specialise, generated from a seed.
// Every task is one row of a table (task_table()) that a UI can read; the
// positional tasks share one generator driven entirely by that row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "headlab/train/rng.hpp"

namespace headlab {

constexpr std::size_t kMaxRelations = 4;

enum class TaskKind {
  positional,  // answers are the tokens at fixed relation positions
  pronoun,     // answers are a pronoun's antecedent entity and its modifier
  lookup,      // answer 1 is found by content (the asked colour), the rest by position
};

// One row of the task table.
//   tokens 0 .. vocab-1; token_names[t] is a printable name for token t.
//   query_position: where the query token sits; the model reads out there.
//   relation_positions[r]: where answer r sits, or -1 when it depends on the
//   example (then Example::answer_positions says where).
struct TaskSpec {
  const char* name;
  TaskKind kind;
  std::size_t seq_len;
  std::size_t vocab;
  std::size_t num_relations;  // R: one softmax output per relation
  std::size_t query_position;
  int relation_positions[kMaxRelations];
  const char* relation_names[kMaxRelations];
  const char* const* token_names;  // [vocab]
  const char* description;
};

// The table, in a fixed order, and lookup by name (nullptr when unknown).
std::size_t task_count();
const TaskSpec& task_at(std::size_t index);
const TaskSpec* find_task(const std::string& name);

// A batch of examples, allocated once for `capacity` examples:
//   tokens [capacity, seq_len], query [capacity] (query position),
//   answers [capacity, R] (answer tokens), answer_positions [capacity, R].
struct TaskBatch {
  TaskBatch() = default;
  TaskBatch(const TaskSpec& spec, std::size_t capacity);
  std::size_t capacity = 0, size = 0, seq_len = 0, num_relations = 0;
  std::vector<std::int32_t> tokens, query, answers, answer_positions;
};

// One example into row `row` of the batch (row < capacity). Draws only from rng.
void generate_example(const TaskSpec& spec, Rng& rng, TaskBatch& batch, std::size_t row);

// Fills rows [0, n) (n <= capacity) and sets batch.size = n. No allocation.
void generate_batch(const TaskSpec& spec, Rng& rng, std::size_t n, TaskBatch& batch);

}  // namespace headlab
