"""ROS-free core: every formula of robot_dynamics lives here (numpy, scipy, pinocchio, cvxpy).

Nothing in this package may import rclpy; the nodes convert messages to arrays and call it.
"""
