#define HAVE_FCNTL_H 1
#define HAVE_SYS_FCNTL_H 1
#define HAVE_UNISTD_H 1
#define HAVE_LOCALE_H 1
#define HAVE_STRUCT_TM_TM_GMTOFF 1
#define CRON_USER "root"
#define VERSION "harness"
#define SYSCONFDIR "/etc"
#define LOCALSTATEDIR "/var"
#define HAVE_STRING_H 1
#define DEBUGGING 1
#include <unistd.h>
extern char **environ;
