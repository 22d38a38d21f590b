// Field snapshots of an FDTD run, kept for scrubbing through time without solving again.
// Snapshots live in memory up to a byte budget; beyond it they are written to raw files in a
// private temporary folder (removed with the store), or refused when spilling is off.
#ifndef vemSnapshotStore_h
#define vemSnapshotStore_h

#include <cstdint>
#include <string>
#include <vector>

namespace vem_vtk
{

class SnapshotStore
{
public:
  struct Field
  {
    std::string name;
    int components;
  };

  SnapshotStore() = default;
  ~SnapshotStore();
  SnapshotStore(const SnapshotStore&) = delete;
  SnapshotStore& operator=(const SnapshotStore&) = delete;

  // Empties the store (and deletes its spill files), then sets the layout: `cells` values per
  // component, the fields of each snapshot, the memory budget and where to spill ("" = no spill;
  // "auto" = the system temporary folder).
  void Reset(long long cells, const std::vector<Field>& fields, long long budget_bytes,
    const std::string& spill_parent);
  void Clear();

  long long BytesPerSnapshot() const;
  // Throws vem::Error when `count` snapshots cannot be held under the budget and spilling is off.
  void CheckCapacity(int count) const;

  // Appends a snapshot; data[f] holds cells * components values of field f.
  void Add(int step, double time, const std::vector<std::vector<float>>& data);
  int Size() const { return static_cast<int>(this->Entries.size()); }
  int Step(int s) const { return this->Entries[s].step; }
  double Time(int s) const { return this->Entries[s].time; }
  bool InMemory(int s) const { return this->Entries[s].file.empty(); }
  const std::vector<Field>& Fields() const { return this->FieldList; }
  long long Cells() const { return this->NumberOfCells; }
  long long BytesInMemory() const { return this->MemoryBytes; }
  const std::string& SpillFolder() const { return this->Folder; }

  // Copies field f of snapshot s into dst (cells * components floats).
  void Read(int s, int f, float* dst) const;

private:
  struct Entry
  {
    int step;
    double time;
    std::vector<std::vector<float>> data;  // empty when spilled
    std::string file;
  };
  std::vector<Field> FieldList;
  std::vector<Entry> Entries;
  long long NumberOfCells = 0;
  long long Budget = 0;
  long long MemoryBytes = 0;
  std::string SpillParent;
  std::string Folder;
};

} // namespace vem_vtk

#endif
