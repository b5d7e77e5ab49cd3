#include "metadata_bounds.hpp"

#include "container_generated.h"
#include "mpspack/format/metadata.hpp"
#include "rules.hpp"

namespace mpspack::format {
namespace {

namespace fb = mpspack::fb;
using flatbuffers::Offset;
using flatbuffers::String;
using flatbuffers::Table;
using flatbuffers::Vector;
using flatbuffers::voffset_t;

// Generated tables inherit Table privately; its verification helpers are reached through a cast.
const Table* as_table(const void* t) { return static_cast<const Table*>(t); }

template <class V>
uint64_t length(const V* v) {
  return v ? v->size() : 0;
}

uint64_t string_size(const String* s) { return s ? limits::string_cost + s->size() : 0; }

uint64_t strings_size(const Vector<Offset<String>>* v) {
  uint64_t n = 0;
  if (v)
    for (const String* s : *v) n += string_size(s);
  return n;
}

class BoundedVerifier {
 public:
  explicit BoundedVerifier(ByteView block)
      : block_(block),
        // A library is opened twice (the length pass, then its own Verify) and holds a region table:
        // room for all of them, each list entry being at most one such table.
        v_(block.data(), block.size(), /*max_depth=*/16, /*max_tables=*/4 * limits::total_entries + 64) {}

  Result<DecodedSize> run() {
    const uint8_t* buf = block_.data();
    if (block_.size() < 2 * sizeof(flatbuffers::uoffset_t) ||
        !flatbuffers::BufferHasIdentifier(buf, fb::MetadataIdentifier()))
      return malformed("has no \"MPKM\" FlatBuffers identifier");
    const flatbuffers::uoffset_t root = v_.VerifyOffset(0);
    if (root == 0) return malformed("has a root offset outside the block");
    MPK_CHECK(metadata(*reinterpret_cast<const fb::Metadata*>(buf + root)));
    return size_;
  }

 private:
  Error malformed(std::string_view why = "fails FlatBuffers verification") const {
    return rule_error(block_.what(), "M2", fmt::format("metadata block ({} bytes) {}", block_.size(), why));
  }

  // Adds to the totals; refuses once they pass rule M4's limits.
  Status charge(uint64_t entries, uint64_t bytes) {
    size_.entries += entries;
    size_.bytes += bytes;
    if (size_.entries > limits::total_entries || size_.bytes > limits::decoded_bytes)
      return rule_error(block_.what(), "M4",
                        fmt::format("metadata decodes to more than {} list entries or {} bytes (each shared "
                                    "string, list or table counts once per reference)",
                                    limits::total_entries, limits::decoded_bytes));
    return {};
  }

  // One list field of table `t`: its offset and its length, so that it can be charged before its
  // elements are verified. `get` reads the field only once its offset has been checked.
  template <class Get>
  bool list(const Table* t, voffset_t field, Get get) {
    return t->VerifyOffset(v_, field) && v_.VerifyVector(get());
  }

  template <class T, class Check>
  Status tables(const Vector<Offset<T>>* v, Check check) {
    if (!v) return {};
    for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) MPK_CHECK(check(*v->Get(i)));
    return {};
  }

  // A table with no lists of its own: `bytes` reads its fields, so it is called only once the table verified
  // (an argument computed beside the Verify call could read the fields first: argument order is unspecified).
  template <class Bytes>
  Status leaf(bool verified, Bytes bytes) {
    if (!verified) return malformed();
    return charge(0, limits::table_cost + bytes());
  }

  Status source(const fb::Source& s) {
    return leaf(s.Verify(v_), [&] {
      return string_size(s.name()) + string_size(s.sha256()) + string_size(s.kind()) + string_size(s.flavour());
    });
  }

  Status segment(const fb::Segment& s) {
    const Table* t = as_table(&s);
    if (!(t->VerifyTableStart(v_) && list(t, fb::Segment::VT_CHUNK_XXH3, [&] { return s.chunk_xxh3(); }) &&
          v_.EndTable()))
      return malformed();
    MPK_CHECK(charge(length(s.chunk_xxh3()), 0));
    return leaf(s.Verify(v_), [&] { return string_size(s.name()) + limits::integer_cost * length(s.chunk_xxh3()); });
  }

  Status library(const fb::Library& l) {
    using L = fb::Library;
    const Table* t = as_table(&l);
    if (!(t->VerifyTableStart(v_) && list(t, L::VT_NEEDED, [&] { return l.needed(); }) &&
          list(t, L::VT_DROPPED_NEEDED, [&] { return l.dropped_needed(); }) &&
          list(t, L::VT_IMPORTS, [&] { return l.imports(); }) && list(t, L::VT_CUBINS, [&] { return l.cubins(); }) &&
          list(t, L::VT_RESTORE, [&] { return l.restore(); }) && v_.EndTable()))
      return malformed();
    MPK_CHECK(charge(length(l.needed()) + length(l.dropped_needed()) + length(l.imports()) + length(l.cubins()) +
                         length(l.restore()),
                     0));
    if (!l.Verify(v_)) return malformed();
    uint64_t bytes = limits::table_cost + string_size(l.name()) + string_size(l.device()) + string_size(l.abi()) +
                     string_size(l.machine()) + string_size(l.original_sha256()) + strings_size(l.needed()) +
                     strings_size(l.dropped_needed()) + strings_size(l.imports()) +
                     limits::integer_cost * length(l.cubins());
    if (l.region()) bytes += limits::table_cost + string_size(l.region()->section());
    if (l.restore())
      for (const fb::Patch* p : *l.restore()) bytes += limits::table_cost + length(p->bytes());
    return charge(0, bytes);
  }

  Status constant(const fb::Constant& c) {
    const uint64_t dims = length(c.shape()) + length(c.stride());
    MPK_CHECK(charge(dims, 0));
    // verified with its Weights table (weights())
    return leaf(true, [&] { return string_size(c.name()) + string_size(c.fqn()) + limits::integer_cost * dims; });
  }

  Status weights(const fb::Weights& w) {
    const Table* t = as_table(&w);
    if (!(t->VerifyTableStart(v_) && list(t, fb::Weights::VT_CONSTANTS, [&] { return w.constants(); }) &&
          v_.EndTable()))
      return malformed();
    MPK_CHECK(charge(length(w.constants()), 0));
    if (!w.Verify(v_)) return malformed();
    MPK_CHECK(charge(0, limits::table_cost));
    return tables(w.constants(), [&](const fb::Constant& c) { return constant(c); });
  }

  Status tensor(const fb::Tensor& x) {
    MPK_CHECK(charge(length(x.shape()), 0));
    // verified with its Example table (example())
    return leaf(true, [&] { return limits::integer_cost * length(x.shape()); });
  }

  Status example(const fb::Example& e) {
    using E = fb::Example;
    const Table* t = as_table(&e);
    if (!(t->VerifyTableStart(v_) && list(t, E::VT_INPUTS, [&] { return e.inputs(); }) &&
          list(t, E::VT_OUTPUTS, [&] { return e.outputs(); }) && v_.EndTable()))
      return malformed();
    MPK_CHECK(charge(length(e.inputs()) + length(e.outputs()), 0));
    if (!e.Verify(v_)) return malformed();
    MPK_CHECK(charge(0, limits::table_cost));
    MPK_CHECK(tables(e.inputs(), [&](const fb::Tensor& x) { return tensor(x); }));
    return tables(e.outputs(), [&](const fb::Tensor& x) { return tensor(x); });
  }

  // The root, verified field by field as its generated Verify would, but each list charged before
  // its elements are verified.
  Status metadata(const fb::Metadata& m) {
    using M = fb::Metadata;
    const Table* t = as_table(&m);
    if (!(t->VerifyTableStart(v_) && t->VerifyOffset(v_, M::VT_PRODUCER) && v_.VerifyString(m.producer()) &&
          t->VerifyOffset(v_, M::VT_PRODUCER_VERSION) && v_.VerifyString(m.producer_version()) &&
          list(t, M::VT_SOURCES, [&] { return m.sources(); }) &&
          list(t, M::VT_SEGMENTS, [&] { return m.segments(); }) &&
          list(t, M::VT_LIBRARIES, [&] { return m.libraries(); }) &&
          list(t, M::VT_WEIGHTS, [&] { return m.weights(); }) && list(t, M::VT_EXAMPLES, [&] { return m.examples(); })))
      return malformed();
    MPK_CHECK(charge(
        length(m.sources()) + length(m.segments()) + length(m.libraries()) + length(m.weights()) + length(m.examples()),
        limits::table_cost + string_size(m.producer()) + string_size(m.producer_version())));
    MPK_CHECK(tables(m.sources(), [&](const fb::Source& s) { return source(s); }));
    MPK_CHECK(tables(m.segments(), [&](const fb::Segment& s) { return segment(s); }));
    MPK_CHECK(tables(m.libraries(), [&](const fb::Library& l) { return library(l); }));
    MPK_CHECK(tables(m.weights(), [&](const fb::Weights& w) { return weights(w); }));
    MPK_CHECK(tables(m.examples(), [&](const fb::Example& e) { return example(e); }));
    if (!v_.EndTable()) return malformed();
    return {};
  }

  ByteView block_;
  flatbuffers::Verifier v_;
  DecodedSize size_;
};

}  // namespace

Result<DecodedSize> verify_bounded(ByteView block) { return BoundedVerifier(block).run(); }

}  // namespace mpspack::format
