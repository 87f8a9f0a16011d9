#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <sys/sysmacros.h>
#include <string.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <netinet/in.h>
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
const unsigned long CPadLinux_UI_SET_RELBIT = UI_SET_RELBIT;
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
const int CPadLinux_EPOLL_CTL_MOD = EPOLL_CTL_MOD;
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

// MARK: - UDP with the local address

int CPadLinux_enablePacketInfo(int fd, int family) {
    int on = 1;
    if (setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &on, sizeof on) != 0) return -1;
    if (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &on, sizeof on) != 0) return -1;
    return 0;
}

/// The local address and interface a datagram was sent to, from its IP_PKTINFO / IPV6_PKTINFO control message.
static void readPacketInfo(struct msghdr *message, unsigned char local[16], int *localLength, int *interfaceIndex) {
    *localLength = 0;
    *interfaceIndex = 0;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(message); header != NULL; header = CMSG_NXTHDR(message, header)) {
        if (header->cmsg_level == IPPROTO_IP && header->cmsg_type == IP_PKTINFO) {
            struct in_pktinfo info;
            memcpy(&info, CMSG_DATA(header), sizeof info);
            memcpy(local, &info.ipi_spec_dst, 4);
            *localLength = 4;
            *interfaceIndex = info.ipi_ifindex;
        } else if (header->cmsg_level == IPPROTO_IPV6 && header->cmsg_type == IPV6_PKTINFO) {
            struct in6_pktinfo info;
            memcpy(&info, CMSG_DATA(header), sizeof info);
            memcpy(local, &info.ipi6_addr, 16);
            *localLength = 16;
            *interfaceIndex = (int)info.ipi6_ifindex;
        }
    }
}

int CPadLinux_receiveDatagrams(
    int fd, unsigned char *buffers, size_t slotCapacity, CPadLinux_ReceivedDatagram *received, int count) {
    if (count < 1 || count > CPadLinux_receiveBatchLimit) {
        errno = EINVAL;
        return -1;
    }
    struct iovec vectors[CPadLinux_receiveBatchLimit];
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(struct in6_pktinfo)) + CMSG_SPACE(sizeof(struct in_pktinfo))];
    } control[CPadLinux_receiveBatchLimit];
    struct mmsghdr messages[CPadLinux_receiveBatchLimit];
    for (int i = 0; i < count; i++) {
        vectors[i] = (struct iovec){.iov_base = buffers + (size_t)i * slotCapacity, .iov_len = slotCapacity};
        messages[i] = (struct mmsghdr){.msg_hdr = {
            .msg_name = &received[i].from, .msg_namelen = sizeof received[i].from, .msg_iov = &vectors[i],
            .msg_iovlen = 1, .msg_control = control[i].bytes, .msg_controllen = sizeof control[i].bytes}};
    }
    int got = recvmmsg(fd, messages, (unsigned int)count, MSG_DONTWAIT, NULL);
    if (got < 0) return -1;
    for (int i = 0; i < got; i++) {
        received[i].fromLength = messages[i].msg_hdr.msg_namelen;
        received[i].length = messages[i].msg_len;
        received[i].truncated = (messages[i].msg_hdr.msg_flags & MSG_TRUNC) != 0;
        readPacketInfo(&messages[i].msg_hdr, received[i].local, &received[i].localLength, &received[i].interfaceIndex);
    }
    return got;
}

/// Makes `buffer` (room for CMSG_SPACE(size)) the message's one control message: `level`/`type` carrying `data`.
static void attachControl(struct msghdr *message, char *buffer, int level, int type, const void *data, size_t size) {
    message->msg_control = buffer;
    message->msg_controllen = CMSG_SPACE(size);
    struct cmsghdr *header = CMSG_FIRSTHDR(message);
    header->cmsg_level = level;
    header->cmsg_type = type;
    header->cmsg_len = CMSG_LEN(size);
    memcpy(CMSG_DATA(header), data, size);
}

ssize_t CPadLinux_sendDatagram(
    int fd, const void *buffer, size_t length, const void *to, socklen_t toLength, int socketFamily,
    const unsigned char *local, int localLength, int interfaceIndex) {
    struct iovec vector = {.iov_base = (void *)buffer, .iov_len = length};
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(struct in6_pktinfo))];
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = {
        .msg_name = (void *)to, .msg_namelen = toLength, .msg_iov = &vector, .msg_iovlen = 1,
    };
    if (localLength == 4 && socketFamily == AF_INET) {
        struct in_pktinfo info = {.ipi_ifindex = interfaceIndex};
        memcpy(&info.ipi_spec_dst, local, 4);
        attachControl(&message, control.bytes, IPPROTO_IP, IP_PKTINFO, &info, sizeof info);
    } else if ((localLength == 4 || localLength == 16) && socketFamily == AF_INET6) {
        // An IPv4 local address on a dual-stack socket goes as its IPv4-mapped form (the kernel's ip_cmsg_send
        // takes IPV6_PKTINFO with a mapped address for an IPv4 destination).
        struct in6_pktinfo info = {.ipi6_ifindex = localLength == 16 ? (unsigned)interfaceIndex : 0};
        if (localLength == 4) {
            info.ipi6_addr.s6_addr[10] = 0xff;
            info.ipi6_addr.s6_addr[11] = 0xff;
            memcpy(&info.ipi6_addr.s6_addr[12], local, 4);
        } else {
            memcpy(&info.ipi6_addr, local, 16);
        }
        attachControl(&message, control.bytes, IPPROTO_IPV6, IPV6_PKTINFO, &info, sizeof info);
    }
    return sendmsg(fd, &message, MSG_DONTWAIT);
}

int CPadLinux_openConnectedDatagramSocket(
    int family, const unsigned char *local, int localLength, int interfaceIndex, unsigned short port, const void *to,
    socklen_t toLength) {
    int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int on = 1, off = 0;
    // SO_REUSEPORT, not SO_REUSEADDR: only sockets of the same user may share the port (another user's cannot bind it).
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0) goto failed;
    if (CPadLinux_enablePacketInfo(fd, family) != 0) goto failed;
    int bound;
    if (family == AF_INET6) {
        if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off) != 0) goto failed;
        struct sockaddr_in6 address = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
        if (localLength == 4) {
            address.sin6_addr.s6_addr[10] = 0xff;
            address.sin6_addr.s6_addr[11] = 0xff;
            memcpy(&address.sin6_addr.s6_addr[12], local, 4);
        } else if (localLength == 16) {
            memcpy(&address.sin6_addr, local, 16);
            if (IN6_IS_ADDR_LINKLOCAL(&address.sin6_addr)) address.sin6_scope_id = (uint32_t)interfaceIndex;
        }
        bound = bind(fd, (const struct sockaddr *)&address, sizeof address);
    } else if (family == AF_INET && (localLength == 4 || localLength == 0)) {
        struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
        if (localLength == 4) memcpy(&address.sin_addr, local, 4);
        bound = bind(fd, (const struct sockaddr *)&address, sizeof address);
    } else {
        errno = EAFNOSUPPORT;
        goto failed;
    }
    if (bound != 0) goto failed;
    if (connect(fd, (const struct sockaddr *)to, toLength) != 0) goto failed;
    return fd;
failed:;
    int error = errno;
    close(fd);
    errno = error;
    return -1;
}

// MARK: - epoll with a nanosecond timeout

int CPadLinux_epollWait(int epollFD, struct epoll_event *events, int capacity, long long timeoutNanoseconds) {
    static int unsupported = 0;
    if (!unsupported) {
        struct timespec timeout = {
            .tv_sec = timeoutNanoseconds / 1000000000LL, .tv_nsec = timeoutNanoseconds % 1000000000LL,
        };
        int count = epoll_pwait2(epollFD, events, capacity, timeoutNanoseconds < 0 ? NULL : &timeout, NULL);
        if (count >= 0 || errno != ENOSYS) return count;
        unsupported = 1;
    }
    int milliseconds = timeoutNanoseconds < 0 ? -1 : (int)((timeoutNanoseconds + 999999LL) / 1000000LL);
    return epoll_wait(epollFD, events, capacity, milliseconds);
}

static int unixAddress(const char *path, struct sockaddr_un *address) {
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof address->sun_path) return -ENAMETOOLONG;
    strcpy(address->sun_path, path);
    return 0;
}

int CPadLinux_unixStreamListen(const char *path, unsigned int mode, int backlog) {
    // Bound under a name of its own, given `mode`, then renamed over `path`: the socket is never at `path` with
    // other permissions, and the process's umask (shared by every thread: another one may be making a directory
    // meanwhile) is never touched.
    static atomic_uint counter;
    struct sockaddr_un address;
    char temporary[sizeof address.sun_path];
    int written = snprintf(temporary, sizeof temporary, "%s.%d-%u.new", path, (int)getpid(),
                           atomic_fetch_add(&counter, 1));
    if (written < 0 || (size_t)written >= sizeof temporary) return -ENAMETOOLONG;
    int status = unixAddress(temporary, &address);
    if (status < 0) return status;
    struct stat existing;
    // Only a socket file left at `path` is replaced (bind(2) would refuse anything else: so does this).
    if (lstat(path, &existing) == 0 && !S_ISSOCK(existing.st_mode)) return -EADDRINUSE;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    if (lstat(temporary, &existing) == 0 && S_ISSOCK(existing.st_mode)) unlink(temporary);
    int failure = 0;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        failure = errno;
        close(fd);
        return -failure;
    }
    if (chmod(temporary, mode & 07777) != 0 || rename(temporary, path) != 0 || listen(fd, backlog) != 0) {
        failure = errno;
        unlink(temporary);
        close(fd);
        return -failure;
    }
    return fd;
}

int CPadLinux_unixStreamConnect(const char *path, int timeoutMilliseconds) {
    struct sockaddr_un address;
    int status = unixAddress(path, &address);
    if (status < 0) return status;
    // Blocking for the connect: on a listener whose backlog is full, a non-blocking connect fails at once with
    // EAGAIN, while a blocking one waits for the listener to accept (bounded by SO_SNDTIMEO, then EAGAIN).
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    struct timeval timeout = {.tv_sec = timeoutMilliseconds / 1000, .tv_usec = (timeoutMilliseconds % 1000) * 1000};
    int connected = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout) == 0
        && connect(fd, (struct sockaddr *)&address, sizeof address) == 0;
    int flags = connected ? fcntl(fd, F_GETFL) : -1;
    if (!connected || flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
        int failure = errno;
        close(fd);
        return -failure;
    }
    return fd;
}

int CPadLinux_acceptConnection(int fd) {
    int connection = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    return connection < 0 ? -errno : connection;
}

int CPadLinux_peerCredentials(int fd, int *pid, unsigned int *uid, unsigned int *gid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -errno;
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

long CPadLinux_getAccessACL(const char *path, void *buffer, unsigned long size) {
    ssize_t length = getxattr(path, "system.posix_acl_access", buffer, size);
    return length < 0 ? -errno : (long)length;
}

int CPadLinux_setAccessACL(const char *path, const void *data, unsigned long size) {
    return setxattr(path, "system.posix_acl_access", data, size, 0) == 0 ? 0 : -errno;
}

int CPadLinux_removeAccessACL(const char *path) {
    return removexattr(path, "system.posix_acl_access") == 0 ? 0 : -errno;
}

long CPadLinux_getAccessACLOf(int fd, void *buffer, unsigned long size) {
    ssize_t length = fgetxattr(fd, "system.posix_acl_access", buffer, size);
    return length < 0 ? -errno : (long)length;
}

int CPadLinux_setAccessACLOf(int fd, const void *data, unsigned long size) {
    return fsetxattr(fd, "system.posix_acl_access", data, size, 0) == 0 ? 0 : -errno;
}

int CPadLinux_removeAccessACLOf(int fd) {
    return fremovexattr(fd, "system.posix_acl_access") == 0 ? 0 : -errno;
}

#define CPADLINUX_MAX_PASSED_DESCRIPTORS 64

long CPadLinux_sendWithDescriptors(int fd, const void *bytes, unsigned long length, const int *descriptors, int count) {
    if (count < 0 || count > CPADLINUX_MAX_PASSED_DESCRIPTORS) return -EINVAL;
    struct iovec vector = {.iov_base = (void *)bytes, .iov_len = length};
    union {
        char buffer[CMSG_SPACE(sizeof(int) * CPADLINUX_MAX_PASSED_DESCRIPTORS)];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = {.msg_iov = &vector, .msg_iovlen = 1};
    if (count > 0) {
        message.msg_control = control.buffer;
        message.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)count);
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)count);
        memcpy(CMSG_DATA(header), descriptors, sizeof(int) * (size_t)count);
    }
    ssize_t sent;
    do {
        sent = sendmsg(fd, &message, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent < 0 ? -errno : (long)sent;
}

long CPadLinux_receiveWithDescriptors(int fd, void *bytes, unsigned long length, int *descriptors, int capacity,
                                      int *received, int *truncated) {
    *received = 0;
    *truncated = 0;
    struct iovec vector = {.iov_base = bytes, .iov_len = length};
    union {
        char buffer[CMSG_SPACE(sizeof(int) * CPADLINUX_MAX_PASSED_DESCRIPTORS)];
        struct cmsghdr align;
    } control;
    struct msghdr message = {.msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.buffer,
                             .msg_controllen = sizeof control.buffer};
    ssize_t count;
    do {
        count = recvmsg(fd, &message, MSG_CMSG_CLOEXEC);
    } while (count < 0 && errno == EINTR);
    if (count < 0) return -errno;
    if (message.msg_flags & MSG_CTRUNC) *truncated = 1;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        size_t passed = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t index = 0; index < passed; index++) {
            int descriptor;
            memcpy(&descriptor, CMSG_DATA(header) + index * sizeof(int), sizeof(int));
            if (*received < capacity) {
                descriptors[(*received)++] = descriptor;
            } else {
                close(descriptor);
                *truncated = 1;
            }
        }
    }
    return (long)count;
}

int CPadLinux_descriptorStatusFlags(int fd) {
    int flags = fcntl(fd, F_GETFL);
    return flags < 0 ? -errno : flags;
}

const int CPadLinux_O_PATH = O_PATH;
const int CPadLinux_O_ACCMODE = O_ACCMODE;
const int CPadLinux_O_WRONLY = O_WRONLY;

unsigned int CPadLinux_deviceMajor(unsigned long long device) { return major(device); }
unsigned int CPadLinux_deviceMinor(unsigned long long device) { return minor(device); }
