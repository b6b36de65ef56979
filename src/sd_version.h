/* sd_version.h — simdec's version, printed by `simdec --version` and echoed
 * in every run's and check's output ("version"). */
#ifndef SD_VERSION_H
#define SD_VERSION_H

#define SD_VERSION "0.2.0"

#endif
