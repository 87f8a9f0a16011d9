// CPadLinux: the kernel's UAPI for padbridge's Linux adapter, in a form Swift can import.
//
// Swift cannot import function-like macros (`_IOC` and everything built on it) nor C variadic functions, so this
// shim exports every ioctl request value as an `extern const unsigned long`, every parameterised request as a
// function, and the byte layout of the packed `struct uhid_event` as offsets. Swift never computes `_IOC` itself.
// (The CNIOLinux pattern.)
#ifndef C_PAD_LINUX_H
#define C_PAD_LINUX_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <linux/hidraw.h>
#include <linux/input.h>
#include <linux/uhid.h>
#include <linux/uinput.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/types.h>

// MARK: - The one C call behind PadLinux's ioctl entry point

/// `ioctl(fd, request, argument)` with a pointer argument. Returns -1 and sets errno on failure.
int CPadLinux_ioctlPointer(int fd, unsigned long request, void *argument);
/// `ioctl(fd, request, value)` with an integer argument (UI_SET_EVBIT and friends take the bit by value).
int CPadLinux_ioctlValue(int fd, unsigned long request, unsigned long value);

// MARK: - uinput

extern const unsigned long CPadLinux_UI_DEV_CREATE;
extern const unsigned long CPadLinux_UI_DEV_DESTROY;
extern const unsigned long CPadLinux_UI_DEV_SETUP;
extern const unsigned long CPadLinux_UI_ABS_SETUP;
extern const unsigned long CPadLinux_UI_SET_EVBIT;
extern const unsigned long CPadLinux_UI_SET_KEYBIT;
extern const unsigned long CPadLinux_UI_SET_RELBIT;
extern const unsigned long CPadLinux_UI_SET_ABSBIT;
extern const unsigned long CPadLinux_UI_SET_FFBIT;
extern const unsigned long CPadLinux_UI_SET_PHYS;
extern const unsigned long CPadLinux_UI_SET_PROPBIT;
extern const unsigned long CPadLinux_UI_BEGIN_FF_UPLOAD;
extern const unsigned long CPadLinux_UI_END_FF_UPLOAD;
extern const unsigned long CPadLinux_UI_BEGIN_FF_ERASE;
extern const unsigned long CPadLinux_UI_END_FF_ERASE;
extern const unsigned long CPadLinux_UI_GET_VERSION;
unsigned long CPadLinux_UI_GET_SYSNAME(unsigned int length);

// MARK: - evdev

extern const unsigned long CPadLinux_EVIOCGRAB;
extern const unsigned long CPadLinux_EVIOCSFF;
extern const unsigned long CPadLinux_EVIOCRMFF;
extern const unsigned long CPadLinux_EVIOCGID;
extern const unsigned long CPadLinux_EVIOCSCLOCKID;
unsigned long CPadLinux_EVIOCGNAME(unsigned int length);
unsigned long CPadLinux_EVIOCGUNIQ(unsigned int length);
unsigned long CPadLinux_EVIOCGPHYS(unsigned int length);
unsigned long CPadLinux_EVIOCGBIT(unsigned int eventType, unsigned int length);
unsigned long CPadLinux_EVIOCGABS(unsigned int axis);
unsigned long CPadLinux_EVIOCGKEY(unsigned int length);

// MARK: - hidraw

extern const unsigned long CPadLinux_HIDIOCGRDESCSIZE;
extern const unsigned long CPadLinux_HIDIOCGRDESC;
extern const unsigned long CPadLinux_HIDIOCGRAWINFO;
unsigned long CPadLinux_HIDIOCGRAWNAME(unsigned int length);
unsigned long CPadLinux_HIDIOCGRAWPHYS(unsigned int length);
unsigned long CPadLinux_HIDIOCGRAWUNIQ(unsigned int length);
unsigned long CPadLinux_HIDIOCSFEATURE(unsigned int length);
unsigned long CPadLinux_HIDIOCGFEATURE(unsigned int length);

// MARK: - uhid: `struct uhid_event` is packed, so Swift reads and writes it by these byte offsets.

extern const size_t CPadLinux_UHID_EVENT_SIZE;
extern const size_t CPadLinux_UHID_DATA_MAX;
extern const size_t CPadLinux_UHID_CREATE2_NAME, CPadLinux_UHID_CREATE2_NAME_SIZE;
extern const size_t CPadLinux_UHID_CREATE2_PHYS, CPadLinux_UHID_CREATE2_PHYS_SIZE;
extern const size_t CPadLinux_UHID_CREATE2_UNIQ, CPadLinux_UHID_CREATE2_UNIQ_SIZE;
extern const size_t CPadLinux_UHID_CREATE2_RD_SIZE;
extern const size_t CPadLinux_UHID_CREATE2_BUS;
extern const size_t CPadLinux_UHID_CREATE2_VENDOR;
extern const size_t CPadLinux_UHID_CREATE2_PRODUCT;
extern const size_t CPadLinux_UHID_CREATE2_VERSION;
extern const size_t CPadLinux_UHID_CREATE2_COUNTRY;
extern const size_t CPadLinux_UHID_CREATE2_RD_DATA;
extern const size_t CPadLinux_UHID_START_DEV_FLAGS;
extern const size_t CPadLinux_UHID_OUTPUT_DATA;
extern const size_t CPadLinux_UHID_OUTPUT_SIZE;
extern const size_t CPadLinux_UHID_OUTPUT_RTYPE;
extern const size_t CPadLinux_UHID_GET_REPORT_ID;
extern const size_t CPadLinux_UHID_GET_REPORT_RNUM;
extern const size_t CPadLinux_UHID_GET_REPORT_RTYPE;
extern const size_t CPadLinux_UHID_GET_REPORT_REPLY_ID;
extern const size_t CPadLinux_UHID_GET_REPORT_REPLY_ERR;
extern const size_t CPadLinux_UHID_GET_REPORT_REPLY_SIZE;
extern const size_t CPadLinux_UHID_GET_REPORT_REPLY_DATA;
extern const size_t CPadLinux_UHID_SET_REPORT_ID;
extern const size_t CPadLinux_UHID_SET_REPORT_RNUM;
extern const size_t CPadLinux_UHID_SET_REPORT_RTYPE;
extern const size_t CPadLinux_UHID_SET_REPORT_SIZE;
extern const size_t CPadLinux_UHID_SET_REPORT_DATA;
extern const size_t CPadLinux_UHID_SET_REPORT_REPLY_ID;
extern const size_t CPadLinux_UHID_SET_REPORT_REPLY_ERR;
extern const size_t CPadLinux_UHID_INPUT2_SIZE;
extern const size_t CPadLinux_UHID_INPUT2_DATA;

// MARK: - kernel uevents (netlink)

/// A non-blocking, close-on-exec NETLINK_KOBJECT_UEVENT socket bound to the kernel's uevent group: every device
/// add/remove the kernel announces, with or without udevd running. Returns the fd, or -1 with errno set.
int CPadLinux_openKernelUeventSocket(void);

// Whether a process listens on the AF_UNIX SOCK_SEQPACKET socket at `path` (a connect succeeds): udevd's
// /run/udev/control outlives udevd as a file, so its existence alone does not say udevd runs.
int CPadLinux_unixSocketIsListening(const char *path);

// MARK: - unix stream sockets and device-node permissions (the hiding service and its clients)

/// A listening AF_UNIX SOCK_STREAM socket at `path` (a socket file left there is replaced), non-blocking and
/// close-on-exec, its file given `mode` under a name of its own and then renamed over `path`, so the file is never
/// at `path` with other permissions and the process-wide umask is never changed. Returns the fd, or -errno.
int CPadLinux_unixStreamListen(const char *path, unsigned int mode, int backlog);
/// A non-blocking, close-on-exec AF_UNIX SOCK_STREAM socket connected to `path`; while the listener's backlog is
/// full, the connect waits up to `timeoutMilliseconds` for it to accept. Returns the fd, or -errno (-EAGAIN: the
/// wait ran out).
int CPadLinux_unixStreamConnect(const char *path, int timeoutMilliseconds);
/// accept4(2) of one connection, non-blocking and close-on-exec. Returns the fd, or -errno (-EAGAIN: none waiting).
int CPadLinux_acceptConnection(int fd);
/// SO_PEERCRED: the connecting process's pid, uid and gid as the kernel recorded them. Returns 0, or -errno.
int CPadLinux_peerCredentials(int fd, int *pid, unsigned int *uid, unsigned int *gid);
/// The "system.posix_acl_access" extended attribute of `path` (its access ACL, in the kernel's xattr form): the
/// length read, or -errno (-ENODATA: the node has no ACL beyond its mode bits).
long CPadLinux_getAccessACL(const char *path, void *buffer, unsigned long size);
/// Sets it (0 or -errno).
int CPadLinux_setAccessACL(const char *path, const void *data, unsigned long size);
/// Removes it (0 or -errno; -ENODATA when there was none).
int CPadLinux_removeAccessACL(const char *path);
/// The same three through an open descriptor of the node (fgetxattr, fsetxattr, fremovexattr): the hiding service
/// acts on the node its client passed, never on whatever a path names by then.
long CPadLinux_getAccessACLOf(int fd, void *buffer, unsigned long size);
int CPadLinux_setAccessACLOf(int fd, const void *data, unsigned long size);
int CPadLinux_removeAccessACLOf(int fd);
/// Sends `length` bytes and `count` descriptors (SCM_RIGHTS, at most 64) in one message, MSG_NOSIGNAL. Returns
/// the bytes sent, or -errno.
long CPadLinux_sendWithDescriptors(int fd, const void *bytes, unsigned long length, const int *descriptors, int count);
/// Receives up to `length` bytes and the descriptors passed with them (close-on-exec), at most `capacity` of them
/// stored in `descriptors`, their number in `*received`; `*truncated` is 1 when more were passed than fit (the
/// kernel closed the rest). Returns the bytes read (0: the peer closed), or -errno.
long CPadLinux_receiveWithDescriptors(int fd, void *bytes, unsigned long length, int *descriptors, int capacity,
                                      int *received, int *truncated);
/// major(3) and minor(3) of a device number.
unsigned int CPadLinux_deviceMajor(unsigned long long device);
unsigned int CPadLinux_deviceMinor(unsigned long long device);
/// fcntl(F_GETFL): the descriptor's access mode and status flags (O_PATH among them), or -errno.
int CPadLinux_descriptorStatusFlags(int fd);
/// O_PATH, O_ACCMODE, O_RDONLY, O_WRONLY, O_RDWR as the C library defines them.
extern const int CPadLinux_O_PATH;
extern const int CPadLinux_O_ACCMODE;
extern const int CPadLinux_O_WRONLY;

// MARK: - helper processes

/// Starts `path` with `argv` (NULL-terminated) and the caller's environment: standard input from /dev/null,
/// standard output into a new pipe whose read end (close-on-exec, non-blocking) is stored in `*outputFd`,
/// standard error inherited, every signal at its default disposition and none blocked (the caller may block
/// signals its signalfd reads). Returns 0 and sets `*pid`, or an errno value.
int CPadLinux_spawnReadingOutput(const char *path, char *const argv[], int *outputFd, pid_t *pid);

/// The wait(2) status macros, which Swift cannot import.
int CPadLinux_WIFEXITED(int status);
int CPadLinux_WEXITSTATUS(int status);
int CPadLinux_WIFSIGNALED(int status);
int CPadLinux_WTERMSIG(int status);

// MARK: - epoll / eventfd / timerfd / signalfd flags (glibc declares these as enums Swift imports awkwardly)

extern const uint32_t CPadLinux_EPOLLIN;
extern const uint32_t CPadLinux_EPOLLOUT;
extern const uint32_t CPadLinux_EPOLLERR;
extern const uint32_t CPadLinux_EPOLLHUP;
extern const int CPadLinux_EPOLL_CLOEXEC;
extern const int CPadLinux_EPOLL_CTL_ADD;
extern const int CPadLinux_EPOLL_CTL_DEL;
extern const int CPadLinux_EPOLL_CTL_MOD;
extern const int CPadLinux_EFD_CLOEXEC;
extern const int CPadLinux_EFD_NONBLOCK;
extern const int CPadLinux_TFD_CLOEXEC;
extern const int CPadLinux_TFD_NONBLOCK;
extern const int CPadLinux_TFD_TIMER_ABSTIME;
extern const int CPadLinux_SFD_CLOEXEC;
extern const int CPadLinux_SFD_NONBLOCK;

// MARK: - epoll with a nanosecond timeout

/// epoll_pwait2(2) with a relative timeout in nanoseconds (-1: wait for ever), the loop's one wait for readiness and
/// for its next timer; on a kernel older than 5.11 (ENOSYS) epoll_wait(2) with the timeout rounded up to a
/// millisecond. Returns the entries filled, or -1 and errno.
int CPadLinux_epollWait(int epollFD, struct epoll_event *events, int capacity, long long timeoutNanoseconds);

// MARK: - UDP with the local address (IP_PKTINFO / IPV6_PKTINFO: CMSG_* are function-like macros)

/// Asks the kernel for each datagram's local address: IP_PKTINFO, and IPV6_RECVPKTINFO on an IPv6 socket (which
/// reports IPv4 datagrams of a dual-stack socket through IP_PKTINFO). Returns 0, or -1 and errno.
int CPadLinux_enablePacketInfo(int fd, int family);

/// What the kernel said of one datagram received by `CPadLinux_receiveDatagrams`: its source, the local address it
/// was sent to (`localLength` 4 or 16; 0 when the kernel gave none) with the interface index, its length, and whether
/// it was longer than its slot (`truncated`: its rest is lost).
typedef struct {
    struct sockaddr_storage from;
    socklen_t fromLength;
    unsigned char local[16];
    int localLength;
    int interfaceIndex;
    int truncated;
    size_t length;
} CPadLinux_ReceivedDatagram;

/// The most datagrams one `CPadLinux_receiveDatagrams` call takes.
#define CPadLinux_receiveBatchLimit 16

/// recvmmsg(2) without blocking: up to `count` (at most `CPadLinux_receiveBatchLimit`) datagrams waiting now, in one
/// system call; the i-th into `buffers + i * slotCapacity`, what the kernel said of it into `received[i]`. Returns
/// how many came (fewer than `count`: the queue is empty now), or -1 and errno (EAGAIN: none was waiting).
int CPadLinux_receiveDatagrams(
    int fd, unsigned char *buffers, size_t slotCapacity, CPadLinux_ReceivedDatagram *received, int count);

/// sendmsg(2) of one datagram to `to`, leaving from `local` (4 bytes on an IPv4 socket; 4 or 16 on an IPv6 one, an
/// IPv4 address going as its IPv4-mapped form) on `interfaceIndex` (0: any); `localLength` 0 sends without.
/// Returns the bytes sent, or -1 and errno.
ssize_t CPadLinux_sendDatagram(
    int fd, const void *buffer, size_t length, const void *to, socklen_t toLength, int socketFamily,
    const unsigned char *local, int localLength, int interfaceIndex);

/// A non-blocking, close-on-exec UDP socket of `family` that shares `port` with the socket already bound there
/// (both have SO_REUSEPORT: sockets of one user only), bound to `local` (`localLength` 4 or 16; an IPv4 address on an IPv6 socket as its
/// IPv4-mapped form; 0: every address) and connected to `to`: the kernel queues the datagrams `to` sends to that
/// local address on this socket, apart from the shared one's queue. A link-local IPv6 `local` is bound on
/// `interfaceIndex`. Returns the descriptor, or -1 and errno.
int CPadLinux_openConnectedDatagramSocket(
    int family, const unsigned char *local, int localLength, int interfaceIndex, unsigned short port, const void *to,
    socklen_t toLength);

#endif
