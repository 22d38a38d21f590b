#include "vemSnapshotStore.h"

#include "vem/core/error.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include <unistd.h>

namespace vem_vtk
{

namespace fs = std::filesystem;

SnapshotStore::~SnapshotStore()
{
  this->Clear();
}

void SnapshotStore::Clear()
{
  this->Entries.clear();
  this->MemoryBytes = 0;
  if (!this->Folder.empty())
  {
    std::error_code ec;
    fs::remove_all(this->Folder, ec);
    this->Folder.clear();
  }
}

void SnapshotStore::Reset(long long cells, const std::vector<Field>& fields, long long budget,
  const std::string& spill_parent)
{
  this->Clear();
  this->NumberOfCells = cells;
  this->FieldList = fields;
  this->Budget = budget;
  this->SpillParent = spill_parent;
}

long long SnapshotStore::BytesPerSnapshot() const
{
  long long comps = 0;
  for (const auto& f : this->FieldList)
  {
    comps += f.components;
  }
  return comps * this->NumberOfCells * static_cast<long long>(sizeof(float));
}

void SnapshotStore::CheckCapacity(int count) const
{
  const long long need = this->BytesPerSnapshot() * count;
  if (need > this->Budget && this->SpillParent.empty())
  {
    vem::fail(count, " snapshots of ", this->NumberOfCells, " cells need ", need / 1048576,
      " MiB, more than the snapshot memory budget of ", this->Budget / 1048576,
      " MiB. Raise the memory budget, enable spilling to disk, take snapshots less often, "
      "or keep fewer fields.");
  }
}

void SnapshotStore::Add(int step, double time, const std::vector<std::vector<float>>& data)
{
  Entry e;
  e.step = step;
  e.time = time;
  const long long bytes = this->BytesPerSnapshot();
  if (this->MemoryBytes + bytes <= this->Budget)
  {
    e.data = data;
    this->MemoryBytes += bytes;
  }
  else
  {
    if (this->SpillParent.empty())
    {
      vem::fail("snapshot memory budget of ", this->Budget / 1048576, " MiB exhausted");
    }
    if (this->Folder.empty())
    {
      static std::atomic<int> counter{ 0 };
      std::error_code ec;
      const fs::path parent =
        this->SpillParent == "auto" ? fs::temp_directory_path(ec) : fs::path(this->SpillParent);
      const fs::path dir = parent /
        ("voxelem-snapshots-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
      fs::create_directories(dir, ec);
      if (ec)
      {
        vem::fail("cannot create the snapshot spill folder '", dir.string(), "': ", ec.message());
      }
      this->Folder = dir.string();
    }
    e.file = (fs::path(this->Folder) / ("snapshot-" + std::to_string(this->Entries.size()) + ".raw"))
               .string();
    std::ofstream out(e.file, std::ios::binary);
    for (const auto& d : data)
    {
      out.write(reinterpret_cast<const char*>(d.data()),
        static_cast<std::streamsize>(d.size() * sizeof(float)));
    }
    if (!out)
    {
      vem::fail("cannot write snapshot file '", e.file, "' (disk full?)");
    }
  }
  this->Entries.push_back(std::move(e));
}

void SnapshotStore::Read(int s, int f, float* dst) const
{
  const Entry& e = this->Entries.at(static_cast<std::size_t>(s));
  const std::size_t n = static_cast<std::size_t>(this->NumberOfCells) * this->FieldList[f].components;
  if (e.file.empty())
  {
    std::copy(e.data[f].begin(), e.data[f].end(), dst);
    return;
  }
  std::size_t offset = 0;
  for (int q = 0; q < f; ++q)
  {
    offset += static_cast<std::size_t>(this->NumberOfCells) * this->FieldList[q].components;
  }
  std::ifstream in(e.file, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset * sizeof(float)));
  in.read(reinterpret_cast<char*>(dst), static_cast<std::streamsize>(n * sizeof(float)));
  if (!in)
  {
    vem::fail("cannot read snapshot file '", e.file, "'");
  }
}

} // namespace vem_vtk
