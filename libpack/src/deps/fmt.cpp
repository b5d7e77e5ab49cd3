// fmt's compiled part, built once here rather than in every translation unit that includes <fmt/format.h>.
// Header-only fmt made each of them compile fmt's formatting core again (about 4.6 of the 5.9 s a file that only
// formats an int took at -O2 -g, over a hundred such files per build); Debian ships fmt as headers plus a shared
// libfmt.so, and a shared object would have to travel beside the binary. So: the headers as Debian ships them,
// FMT_HEADER_ONLY off (libpack/CMakeLists.txt), and the non-inline definitions of format-inl.h compiled into
// libmpspack.a, with the templates format.h declares but does not define instantiated for the types it names.
#include <fmt/format-inl.h>

#if FMT_VERSION / 100 != 901
#error "libpack/src/deps/fmt.cpp instantiates what fmt 9.1's format.h declares: check it against this fmt version"
#endif
#ifdef FMT_HEADER_ONLY
#error "libpack/src/deps/fmt.cpp is fmt's compiled part: FMT_HEADER_ONLY must be off"
#endif

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;

}  // namespace detail
FMT_END_NAMESPACE
