/*
 * verbs_provider.h - our own declarations of libibverbs' private provider ABI.
 *
 * Debian ships no <infiniband/driver.h>, so the provider declares here the
 * structures and functions of IBVERBS_PRIVATE_<PABI> that it uses, for the
 * rdma-core layout family configure picked (provider/abi/releases.tsv):
 * config.h defines UROCE_LAYOUT_RDMA_CORE (the release whose table describes
 * the family: 36, 44, 45, 59, 62 or 64) and UROCE_PABI_VERSION (34, 57, 59 or
 * 64). Every offset and size below is checked at build time against that
 * table by the generated header verbs_provider_layout.h
 * (scripts/gen-layout-asserts): if a line here disagrees, the build fails.
 *
 * Across rdma-core 36-64 only verbs_context_ops changes among the private
 * structs (slots added in 59, 62 and 64); verbs_qp grows with the public
 * ibv_qp_ex of the installed <infiniband/verbs.h> (44, 45), and
 * verbs_context is public. Source of the facts: the tables in provider/abi/ and
 * docs/provider-abi.md §4; the public types come from the
 * installed <infiniband/verbs.h>.
 *
 * The PABI number does not pin a layout (it changed inside PABI 34 at v35,
 * v36, v44 and v45), so provider/abi_version.c refuses to register with any
 * libibverbs whose exact release is outside the configured family.
 */
#ifndef UROCE_VERBS_PROVIDER_H
#define UROCE_VERBS_PROVIDER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <infiniband/verbs.h>

#if !defined(UROCE_LAYOUT_RDMA_CORE) || !defined(UROCE_PABI_VERSION)
#error "include config.h first: configure defines the rdma-core layout family"
#endif

/* Types of op slots added in rdma-core 59-64 that older headers lack. */
struct ibv_buf;
struct ibv_dmah;
struct ibv_dmah_init_attr;
struct ibv_mr_init_attr;

/* Doubly linked list node of rdma-core's ccan/list.h (16 bytes). */
struct list_node {
	struct list_node *next;
	struct list_node *prev;
};

/* verbs_match_ent.kind values. */
enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

/*
 * One row of a provider's match table (24 bytes). For kind MODALIAS,
 * u.modalias is an fnmatch pattern tried against "rdma_device:N<ibdev>"
 * (init.c:match_name) and the device's modalias file.
 */
struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

/* verbs_sysfs_dev.flags bits. */
enum {
	VSYSFS_READ_MODALIAS = 1 << 0,
	VSYSFS_READ_NODE_GUID = 1 << 1,
};

/*
 * A device libibverbs found in sysfs (992 bytes). Read-only for providers;
 * libibverbs frees it (ibverbs_device_put). ibdev_path is the absolute
 * "$SYSFS_PATH/class/infiniband/<ibdev>" directory, abi_ver the value of
 * class/infiniband_verbs/<uv>/abi_version (0 if absent).
 */
struct verbs_sysfs_dev {
	struct list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

struct verbs_device;

/*
 * What a provider registers with verbs_register_driver_<PABI> (72 bytes).
 * match_device, when set, has the final say on a device that passed the
 * table; alloc_device must use its argument (libibverbs sets ->sysfs only
 * after it returns). Source: docs/provider-abi.md §1.3-1.4.
 */
struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/* verbs_device.core_support bit: libibverbs keeps IBV_ACCESS_OPTIONAL_RANGE. */
#define UROCE_CORE_SUPPORT_OPTIONAL_MR_ACCESS (1ULL << 0)

/* The provider's device object (712 bytes); `device` must be first. */
struct verbs_device {
	struct ibv_device device;
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

enum verbs_xrcd_mask {
	VERBS_XRCD_HANDLE = 1 << 0,
};

/* XRC domain wrapper (16 bytes). */
struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

/* SRQ wrapper (160 bytes). */
struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

/* verbs_qp.comp_mask bits; ibv_qp_to_qp_ex() needs VERBS_QP_EX. */
enum verbs_qp_mask {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

/* GID types as written in sysfs gid_attrs/types. */
enum ibv_gid_type_sysfs {
	IBV_GID_TYPE_SYSFS_IB_ROCE_V1 = 0,
	IBV_GID_TYPE_SYSFS_ROCE_V2 = 1,
};

/* verbs_mr.mr_type values, read by ibv_dereg_mr / ibv_rereg_mr. */
enum ibv_mr_type {
	IBV_MR_TYPE_MR = 0,
	IBV_MR_TYPE_NULL_MR = 1,
	IBV_MR_TYPE_IMPORTED_MR = 2,
	IBV_MR_TYPE_DMABUF_MR = 3,
};

/* MR wrapper (56 bytes): the provider sets mr_type and access. */
struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

/*
 * QP wrapper: 360 bytes up to rdma-core 43, 368 in 44 (ibv_qp_ex gained
 * wr_atomic_write), 376 from 45 (wr_flush); the installed verbs.h decides.
 */
struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

/* CQ wrapper (288 bytes): legacy and extended CQ share the storage. */
struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

enum ibv_flow_action_type {
	IBV_FLOW_ACTION_UNSPECIFIED = 0,
	IBV_FLOW_ACTION_ESP = 1,
};

/* Flow-action wrapper (16 bytes). */
struct verbs_flow_action {
	struct ibv_flow_action action;
	uint32_t handle;
	enum ibv_flow_action_type type;
};

/* Device-memory wrapper (40 bytes). */
struct verbs_dm {
	struct ibv_dm dm;
	uint32_t handle;
};

/* Counters wrapper (16 bytes). */
struct verbs_counters {
	struct ibv_counters counters;
	uint32_t handle;
};

/*
 * Every op a provider may implement, one pointer each in alphabetical order
 * (docs/provider-abi.md §4.2, §4.4): 76 slots / 608 bytes in rdma-core 36-58, 79 /
 * 632 from 59 (+alloc_dmah, dealloc_dmah, reg_mr_ex), 81 / 648 from 62
 * (+dm_export_dmabuf_fd, query_port_speed), 83 / 664 in 64 (+alloc_buf,
 * free_buf). verbs_set_ops copies only the non-NULL slots; a NULL slot keeps
 * libibverbs' dummy, which fails with EOPNOTSUPP.
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sges);
#if UROCE_LAYOUT_RDMA_CORE >= 64
	void *(*alloc_buf)(struct ibv_pd *pd, size_t size, struct ibv_buf **buf);
#endif
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
#if UROCE_LAYOUT_RDMA_CORE >= 59
	struct ibv_dmah *(*alloc_dmah)(struct ibv_context *context,
				       struct ibv_dmah_init_attr *attr);
#endif
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
					      struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context, struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(struct ibv_context *context,
						struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel, int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp, struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(struct ibv_context *context,
							  struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(struct ibv_context *context,
							  struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *srq_init_attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *srq_init_attr_ex);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *wq_init_attr);
#if UROCE_LAYOUT_RDMA_CORE >= 59
	int (*dealloc_dmah)(struct ibv_dmah *dmah);
#endif
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
#if UROCE_LAYOUT_RDMA_CORE >= 62
	int (*dm_export_dmabuf_fd)(struct ibv_dm *dm);
#endif
#if UROCE_LAYOUT_RDMA_CORE >= 64
	void (*free_buf)(struct ibv_buf *buf);
#endif
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context, uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context, uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr, size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
#if UROCE_LAYOUT_RDMA_CORE >= 62
	int (*query_port_speed)(struct ibv_context *context, uint32_t port_num,
				uint64_t *speed);
#endif
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context, struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*read_counters)(struct ibv_counters *counters, uint64_t *counters_value,
			     uint32_t ncounters, uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length, unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset, size_t length,
					uint64_t iova, int fd, int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
#if UROCE_LAYOUT_RDMA_CORE >= 59
	struct ibv_mr *(*reg_mr_ex)(struct ibv_pd *pd, struct ibv_mr_init_attr *mr_init_attr);
#endif
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/*
 * Functions of IBVERBS_PRIVATE_<PABI> (libibverbs.so.1). Linking with
 * -libverbs binds these to the private symbol version automatically.
 */

#define UROCE_PASTE2(a, b) a##b
#define UROCE_PASTE(a, b) UROCE_PASTE2(a, b)
/* verbs_register_driver_<PABI>: libibverbs names it after the private ABI. */
#define uroce_verbs_register_driver UROCE_PASTE(verbs_register_driver_, UROCE_PABI_VERSION)

/* Appends `ops` to libibverbs' driver list; call once from a constructor. */
void uroce_verbs_register_driver(const struct verbs_device_ops *ops);

/*
 * Allocates alloc_size zeroed bytes, initialises the verbs_context found at
 * byte offset (uintptr_t)context_offset inside them (cmd_fd, device ref,
 * dummy ops, async_fd = -1), returns the start of the allocation or NULL
 * with errno set.
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);

/* Closes cmd_fd and async_fd, frees libibverbs' private part, drops the device ref. */
void verbs_uninit_context(struct verbs_context *context);

/* Copies the non-NULL slots of `ops` into the context's op tables. */
void verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops);

/* Allocates a provider context struct TYPE whose verbs_context member is MEMB. */
#define uroce_init_and_alloc_context(ibdev, cmd_fd, type, memb)                \
	((type *)_verbs_init_and_alloc_context(                                \
		(ibdev), (cmd_fd), sizeof(type),                               \
		(struct verbs_context *)offsetof(type, memb), 0))

#endif /* UROCE_VERBS_PROVIDER_H */
