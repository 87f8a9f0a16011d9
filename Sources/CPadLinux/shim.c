#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "CPadLinux.h"

extern char **environ;

int CPadLinux_ioctlPointer(int fd, unsigned long request, void *argument) { return ioctl(fd, request, argument); }
int CPadLinux_ioctlValue(int fd, unsigned long request, unsigned long value) { return ioctl(fd, request, value); }

const unsigned long CPadLinux_UI_DEV_CREATE = UI_DEV_CREATE;
const unsigned long CPadLinux_UI_DEV_DESTROY = UI_DEV_DESTROY;
const unsigned long CPadLinux_UI_DEV_SETUP = UI_DEV_SETUP;
const unsigned long CPadLinux_UI_ABS_SETUP = UI_ABS_SETUP;
const unsigned long CPadLinux_UI_SET_EVBIT = UI_SET_EVBIT;
const unsigned long CPadLinux_UI_SET_KEYBIT = UI_SET_KEYBIT;
const unsigned long CPadLinux_UI_SET_ABSBIT = UI_SET_ABSBIT;
const unsigned long CPadLinux_UI_SET_FFBIT = UI_SET_FFBIT;
const unsigned long CPadLinux_UI_SET_PHYS = UI_SET_PHYS;
const unsigned long CPadLinux_UI_SET_PROPBIT = UI_SET_PROPBIT;
const unsigned long CPadLinux_UI_BEGIN_FF_UPLOAD = UI_BEGIN_FF_UPLOAD;
const unsigned long CPadLinux_UI_END_FF_UPLOAD = UI_END_FF_UPLOAD;
const unsigned long CPadLinux_UI_BEGIN_FF_ERASE = UI_BEGIN_FF_ERASE;
const unsigned long CPadLinux_UI_END_FF_ERASE = UI_END_FF_ERASE;
const unsigned long CPadLinux_UI_GET_VERSION = UI_GET_VERSION;
unsigned long CPadLinux_UI_GET_SYSNAME(unsigned int length) { return UI_GET_SYSNAME(length); }

const unsigned long CPadLinux_EVIOCGRAB = EVIOCGRAB;
const unsigned long CPadLinux_EVIOCSFF = EVIOCSFF;
const unsigned long CPadLinux_EVIOCRMFF = EVIOCRMFF;
const unsigned long CPadLinux_EVIOCGID = EVIOCGID;
const unsigned long CPadLinux_EVIOCSCLOCKID = EVIOCSCLOCKID;
unsigned long CPadLinux_EVIOCGNAME(unsigned int length) { return EVIOCGNAME(length); }
unsigned long CPadLinux_EVIOCGUNIQ(unsigned int length) { return EVIOCGUNIQ(length); }
unsigned long CPadLinux_EVIOCGPHYS(unsigned int length) { return EVIOCGPHYS(length); }
unsigned long CPadLinux_EVIOCGBIT(unsigned int eventType, unsigned int length) { return EVIOCGBIT(eventType, length); }
unsigned long CPadLinux_EVIOCGABS(unsigned int axis) { return EVIOCGABS(axis); }
unsigned long CPadLinux_EVIOCGKEY(unsigned int length) { return EVIOCGKEY(length); }

const unsigned long CPadLinux_HIDIOCGRDESCSIZE = HIDIOCGRDESCSIZE;
const unsigned long CPadLinux_HIDIOCGRDESC = HIDIOCGRDESC;
const unsigned long CPadLinux_HIDIOCGRAWINFO = HIDIOCGRAWINFO;
unsigned long CPadLinux_HIDIOCGRAWNAME(unsigned int length) { return HIDIOCGRAWNAME(length); }
unsigned long CPadLinux_HIDIOCGRAWPHYS(unsigned int length) { return HIDIOCGRAWPHYS(length); }
#ifdef HIDIOCGRAWUNIQ
unsigned long CPadLinux_HIDIOCGRAWUNIQ(unsigned int length) { return HIDIOCGRAWUNIQ(length); }
#else
unsigned long CPadLinux_HIDIOCGRAWUNIQ(unsigned int length) { return _IOC(_IOC_READ, 'H', 0x08, length); }
#endif
unsigned long CPadLinux_HIDIOCSFEATURE(unsigned int length) { return HIDIOCSFEATURE(length); }
unsigned long CPadLinux_HIDIOCGFEATURE(unsigned int length) { return HIDIOCGFEATURE(length); }

#define UHID_OFFSET(member) offsetof(struct uhid_event, member)
#define UHID_SIZE(member) sizeof(((struct uhid_event *)0)->member)
const size_t CPadLinux_UHID_EVENT_SIZE = sizeof(struct uhid_event);
const size_t CPadLinux_UHID_DATA_MAX = UHID_DATA_MAX;
const size_t CPadLinux_UHID_CREATE2_NAME = UHID_OFFSET(u.create2.name);
const size_t CPadLinux_UHID_CREATE2_NAME_SIZE = UHID_SIZE(u.create2.name);
const size_t CPadLinux_UHID_CREATE2_PHYS = UHID_OFFSET(u.create2.phys);
const size_t CPadLinux_UHID_CREATE2_PHYS_SIZE = UHID_SIZE(u.create2.phys);
const size_t CPadLinux_UHID_CREATE2_UNIQ = UHID_OFFSET(u.create2.uniq);
const size_t CPadLinux_UHID_CREATE2_UNIQ_SIZE = UHID_SIZE(u.create2.uniq);
const size_t CPadLinux_UHID_CREATE2_RD_SIZE = UHID_OFFSET(u.create2.rd_size);
const size_t CPadLinux_UHID_CREATE2_BUS = UHID_OFFSET(u.create2.bus);
const size_t CPadLinux_UHID_CREATE2_VENDOR = UHID_OFFSET(u.create2.vendor);
const size_t CPadLinux_UHID_CREATE2_PRODUCT = UHID_OFFSET(u.create2.product);
const size_t CPadLinux_UHID_CREATE2_VERSION = UHID_OFFSET(u.create2.version);
const size_t CPadLinux_UHID_CREATE2_COUNTRY = UHID_OFFSET(u.create2.country);
const size_t CPadLinux_UHID_CREATE2_RD_DATA = UHID_OFFSET(u.create2.rd_data);
const size_t CPadLinux_UHID_START_DEV_FLAGS = UHID_OFFSET(u.start.dev_flags);
const size_t CPadLinux_UHID_OUTPUT_DATA = UHID_OFFSET(u.output.data);
const size_t CPadLinux_UHID_OUTPUT_SIZE = UHID_OFFSET(u.output.size);
const size_t CPadLinux_UHID_OUTPUT_RTYPE = UHID_OFFSET(u.output.rtype);
const size_t CPadLinux_UHID_GET_REPORT_ID = UHID_OFFSET(u.get_report.id);
const size_t CPadLinux_UHID_GET_REPORT_RNUM = UHID_OFFSET(u.get_report.rnum);
const size_t CPadLinux_UHID_GET_REPORT_RTYPE = UHID_OFFSET(u.get_report.rtype);
const size_t CPadLinux_UHID_GET_REPORT_REPLY_ID = UHID_OFFSET(u.get_report_reply.id);
const size_t CPadLinux_UHID_GET_REPORT_REPLY_ERR = UHID_OFFSET(u.get_report_reply.err);
const size_t CPadLinux_UHID_GET_REPORT_REPLY_SIZE = UHID_OFFSET(u.get_report_reply.size);
const size_t CPadLinux_UHID_GET_REPORT_REPLY_DATA = UHID_OFFSET(u.get_report_reply.data);
const size_t CPadLinux_UHID_SET_REPORT_ID = UHID_OFFSET(u.set_report.id);
const size_t CPadLinux_UHID_SET_REPORT_RNUM = UHID_OFFSET(u.set_report.rnum);
const size_t CPadLinux_UHID_SET_REPORT_RTYPE = UHID_OFFSET(u.set_report.rtype);
const size_t CPadLinux_UHID_SET_REPORT_SIZE = UHID_OFFSET(u.set_report.size);
const size_t CPadLinux_UHID_SET_REPORT_DATA = UHID_OFFSET(u.set_report.data);
const size_t CPadLinux_UHID_SET_REPORT_REPLY_ID = UHID_OFFSET(u.set_report_reply.id);
const size_t CPadLinux_UHID_SET_REPORT_REPLY_ERR = UHID_OFFSET(u.set_report_reply.err);
const size_t CPadLinux_UHID_INPUT2_SIZE = UHID_OFFSET(u.input2.size);
const size_t CPadLinux_UHID_INPUT2_DATA = UHID_OFFSET(u.input2.data);

const uint32_t CPadLinux_EPOLLIN = EPOLLIN;
const uint32_t CPadLinux_EPOLLOUT = EPOLLOUT;
const uint32_t CPadLinux_EPOLLERR = EPOLLERR;
const uint32_t CPadLinux_EPOLLHUP = EPOLLHUP;
const int CPadLinux_EPOLL_CLOEXEC = EPOLL_CLOEXEC;
const int CPadLinux_EPOLL_CTL_ADD = EPOLL_CTL_ADD;
const int CPadLinux_EPOLL_CTL_DEL = EPOLL_CTL_DEL;
const int CPadLinux_EFD_CLOEXEC = EFD_CLOEXEC;
const int CPadLinux_EFD_NONBLOCK = EFD_NONBLOCK;
const int CPadLinux_TFD_CLOEXEC = TFD_CLOEXEC;
const int CPadLinux_TFD_NONBLOCK = TFD_NONBLOCK;
const int CPadLinux_TFD_TIMER_ABSTIME = TFD_TIMER_ABSTIME;
const int CPadLinux_SFD_CLOEXEC = SFD_CLOEXEC;
const int CPadLinux_SFD_NONBLOCK = SFD_NONBLOCK;

int CPadLinux_openKernelUeventSocket(void) {
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
    if (fd < 0) return -1;
    struct sockaddr_nl address = { .nl_family = AF_NETLINK, .nl_pid = 0, .nl_groups = 1 };
    if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int CPadLinux_unixSocketIsListening(const char *path) {
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof address.sun_path) {
        close(fd);
        return 0;
    }
    strcpy(address.sun_path, path);
    int listening = connect(fd, (struct sockaddr *)&address, sizeof address) == 0 || errno == EINPROGRESS
        || errno == EAGAIN;
    close(fd);
    return listening;
}

int CPadLinux_spawnReadingOutput(const char *path, char *const argv[], int *outputFd, pid_t *pid) {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) return errno;
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int result = posix_spawn_file_actions_init(&actions);
    if (result != 0) goto closePipe;
    result = posix_spawnattr_init(&attributes);
    if (result != 0) goto destroyActions;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if ((result = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)) != 0
        || (result = posix_spawn_file_actions_adddup2(&actions, ends[1], 1)) != 0
        || (result = posix_spawnattr_setsigmask(&attributes, &none)) != 0
        || (result = posix_spawnattr_setsigdefault(&attributes, &all)) != 0
        || (result = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) != 0) {
        goto destroyAll;
    }
    result = posix_spawn(pid, path, &actions, &attributes, argv, environ);
destroyAll:
    posix_spawnattr_destroy(&attributes);
destroyActions:
    posix_spawn_file_actions_destroy(&actions);
closePipe:
    close(ends[1]);
    if (result != 0) {
        close(ends[0]);
        return result;
    }
    int flags = fcntl(ends[0], F_GETFL);
    fcntl(ends[0], F_SETFL, flags | O_NONBLOCK);
    *outputFd = ends[0];
    return 0;
}

int CPadLinux_WIFEXITED(int status) { return WIFEXITED(status); }
int CPadLinux_WEXITSTATUS(int status) { return WEXITSTATUS(status); }
int CPadLinux_WIFSIGNALED(int status) { return WIFSIGNALED(status); }
int CPadLinux_WTERMSIG(int status) { return WTERMSIG(status); }
